"""Script-mode generators: the organic ``automation`` family (VoxLang automation scripts with
``std.fs``, ``std.process``, ``std.env``, ``std.json``, ``std.http``, ``std.time``) and the
synthetic script pairs (an automation task in plain words -> a ``.vox`` script)."""

from __future__ import annotations

import random

from pipeline.generators.base import Program, ask, lines, pick
from pipeline.generators.themes import Theme


def _env_name(t: Theme, what: str) -> str:
    return f"{t.key.upper()}_{what}"


def automation(rng: random.Random, t: Theme) -> Program:
    """Family ``automation``: top-level scripts over the standard library."""
    kind = rng.choice(("csv_sum", "env_process", "http_json", "timing", "write_report"))
    path = pick(rng, f"{t.es}.csv", f"data/{t.es}.csv", f"{t.key}_export.csv", f"reports/{t.es}.csv")
    if kind == "csv_sum":
        col = rng.choice((1, 2))
        code = lines("import std.fs", "", f"let path = \"{path}\"", "match fs.read(path) {", "  Ok(content) -> {",
                     "    let mut total = 0", "    for line in content.split(\"\\n\") {",
                     "      let cells = line.split(\",\")", f"      if len(cells) > {col} {{ total += int(cells[{col}]) }}",
                     "    }", f"    print(\"total {t.count}: \" + str(total))", "  }",
                     "  Error(msg) -> print(\"cannot read \" + path + \": \" + msg)", "}")
        what = f"read `{path}` and print the sum of column {col} ({t.count}), reporting a read error instead of crashing"
        return Program(code, (ask(rng, what),), "script_fs_read", 2, "`fs.read` returns a Result, so the script matches `Ok` and `Error`.")
    if kind == "env_process":
        var = _env_name(t, pick(rng, "BRANCH", "REF", "TAG"))
        default = pick(rng, "main", "release", "stable")
        cmd = rng.choice((("git", "checkout"), ("git", "switch")))
        helper = rng.random() < 0.5
        code = lines("import std.env", "import std.process", "",
                     *(("fn setting(name: str, fallback: str) to str {", "  ret env.get(name).unwrap_or(fallback)", "}", "",
                        f"let target = setting(\"{var}\", \"{default}\")") if helper else
                       (f"let target = env.get(\"{var}\").unwrap_or(\"{default}\")",)),
                     f"match process.run(\"{cmd[0]}\", [\"{cmd[1]}\", target]) {{", "  Ok(out) -> print(out)",
                     f"  Error(msg) -> print(\"{cmd[1]} failed: \" + msg)", "}")
        what = f"run `{cmd[0]} {cmd[1]}` on the branch named by the `{var}` environment variable, defaulting to `{default}`"
        return Program(code, (ask(rng, what),), "script_env_process", 1, "`env.get` gives an Option; `unwrap_or` supplies the default.")
    if kind == "http_json":
        url = f"https://{pick(rng, 'api', 'data', 'internal')}.example.com/{pick(rng, '', 'v1/', 'v2/')}{t.es}"
        fn = pick(rng, f"fetch_{t.e}_fields", f"count_{t.e}_fields")
        code = lines("import std.http", "import std.json", "", f"fn {fn}(url: str) to Result[int] {{",
                     "  let body = http.get(url)?", "  let data = json.parse(body)?", "  ret Ok(len(data))", "}", "",
                     f"match {fn}(\"{url}\") {{", "  Ok(n) -> print(str(n) + \" fields\")",
                     "  Error(msg) -> print(\"request failed: \" + msg)", "}")
        what = f"fetch JSON from `{url}` and print how many fields it has, with errors propagated by `?` inside a helper function"
        return Program(code, (ask(rng, what),), "script_http_json", 2, "Inside a function returning a Result, `?` passes errors up.")
    if kind == "timing":
        n, ms = rng.choice((3, 5, 10)), rng.choice((100, 250, 1000))
        code = lines("import std.time", "", "let start = time.now()", f"for i in range(0, {n}) {{",
                     f"  print(\"checking {t.es}, pass \" + str(i + 1))", f"  time.sleep({ms})", "}",
                     "print(\"done in \" + str(time.now() - start) + \" ms\")")
        what = f"print a progress line for {n} passes over the {t.es}, sleeping {ms} ms between passes, and report the elapsed time"
        return Program(code, (ask(rng, what),), "script_time", 1, "`range(0, n)` excludes `n`, so the loop runs n times.")
    out = pick(rng, f"{t.e}_report.txt", f"{t.es}.txt", f"out/{t.e}_names.txt", f"{t.key}_summary.txt")
    code = lines("import std.fs", "", f"let out = \"{out}\"", f"let rows = [\"{t.sample[0]}\", \"{t.sample[1]}\", \"{t.sample[2]}\"]",
                 "if fs.exists(out) { print(\"overwriting \" + out) }", "match fs.write(out, rows.join(\"\\n\")) {",
                 "  Ok(_) -> print(\"wrote \" + str(len(rows)) + \" lines to \" + out)",
                 "  Error(msg) -> print(\"write failed: \" + msg)", "}")
    what = f"write three {t.e} names to `{out}`, one per line, warning first if the file already exists"
    return Program(code, (ask(rng, what),), "script_fs_write", 1, "`fs.write` returns `Result[Unit]`; `Ok(_)` ignores the Unit value.")


def script_pairs(rng: random.Random, t: Theme) -> Program:
    """Synthetic ``script`` pairs: a task description in plain words -> an automation script."""
    return rng.choice((_backup, _require_env, _health, _json_config, _run_each, _count_files, _grep_log,
                       _post_status))(rng, t)


def _data_dir(rng: random.Random, t: Theme) -> str:
    return pick(rng, f"{t.es}_data", f"data/{t.es}", f"{t.key}_exports", f"incoming_{t.es}")


def _backup(rng: random.Random, t: Theme) -> Program:
    d, dest = _data_dir(rng, t), pick(rng, "backup", "archive", "snapshots", f"{t.key}_backup")
    helper = pick(rng, "copy_file", "copy_one", "duplicate")
    verb = pick(rng, "copied", "saved", "backed up")
    code = lines("import std.fs", "", f"fn {helper}(src: str, dst: str) to Result[Unit] {{", "  let body = fs.read(src)?",
                 "  ret fs.write(dst, body)", "}", "", f"match fs.list(\"{d}\") {{", "  Ok(names) -> {",
                 "    for name in names {", f"      match {helper}(\"{d}/\" + name, \"{dest}/\" + name) {{",
                 f"        Ok(_) -> print(\"{verb} \" + name)", "        Error(msg) -> print(\"skipped \" + name + \": \" + msg)",
                 "      }", "    }", "  }", f"  Error(msg) -> print(\"cannot list {d}: \" + msg)", "}")
    prompt = pick(rng, f"Every night I copy each file in {d}/ into {dest}/. Write a Vox script that does it and says which files were skipped.",
                  f"Back up all files from the {d} folder into {dest}, printing one line per file.",
                  f"Script request: mirror {d} to {dest}, file by file, and report failures without stopping.")
    return Program(code, (prompt,), "script_backup", 3, f"`{helper}` uses `?` so a failed read skips only that file.")


def _require_env(rng: random.Random, t: Theme) -> Program:
    names = [_env_name(t, s) for s in rng.sample(("TOKEN", "HOST", "PORT", "USER", "DIR", "REGION", "BUCKET"), rng.randint(2, 4))]
    counter = pick(rng, "missing", "absent", "problems")
    code = lines("import std.env", "", f"let required = [{', '.join(chr(34) + n + chr(34) for n in names)}]",
                 f"let mut {counter} = 0", "for name in required {", "  match env.get(name) {",
                 f"    Some(_) -> print(name + \" {pick(rng, 'is set', 'ok', 'found')}\")", "    None -> {",
                 "      print(name + \" is missing\")", f"      {counter} += 1", "    }", "  }", "}",
                 f"print(str({counter}) + \" of \" + str(len(required)) + \" missing\")")
    listing = ", ".join(names)
    prompt = pick(rng, f"Before the {t.key} job starts, check that {listing} are set in the environment and print how many are missing.",
                  f"Write a preflight script that verifies the environment variables {listing}.",
                  f"Which of {listing} are unset? Print each one and a total.")
    return Program(code, (prompt,), "script_env_check", 2, "`env.get` returns `Some` or `None`, matched in the loop.")


def _health(rng: random.Random, t: Theme) -> Program:
    url = f"https://{t.key}.example.com/{pick(rng, 'health', 'status', 'ping', 'ready')}"
    tries, wait = rng.choice((3, 5, 10)), rng.choice((200, 500, 1000, 2000))
    code = lines("import std.http", "import std.time", "", "let mut ok = false", "let mut attempt = 0",
                 f"while attempt < {tries} and not ok {{", f"  match http.get(\"{url}\") {{", "    Ok(_) -> { ok = true }",
                 "    Error(msg) -> {", "      print(\"attempt \" + str(attempt + 1) + \" failed: \" + msg)",
                 f"      time.sleep({wait})", "    }", "  }", "  attempt += 1", "}",
                 f"if ok {{ print(\"{t.key} is up\") }} else {{ print(\"{t.key} is down after {tries} tries\") }}")
    prompt = pick(rng, f"Poll {url} up to {tries} times, {wait} ms apart, and tell me whether the service came up.",
                  f"I need a health check script for the {t.key} service: retry {url} {tries} times ({wait} ms pause) before giving up.",
                  f"Wait for {url} to answer: at most {tries} attempts with a {wait} ms sleep between them.")
    return Program(code, (prompt,), "script_health_retry", 2, "The loop stops early once `ok` is set.")


def _json_config(rng: random.Random, t: Theme) -> Program:
    key, default = pick(rng, "mode", "region", "owner", "schedule", "level"), pick(rng, "unset", "default", "none")
    file = pick(rng, f"{t.key}.json", f"config/{t.key}.json", f"{t.es}_settings.json")
    fn = pick(rng, "read_setting", "setting_from", "config_value")
    code = lines("import std.fs", "import std.json", "", f"fn {fn}(path: str, key: str) to Result[str] {{",
                 "  let text = fs.read(path)?", "  let config = json.parse(text)?",
                 f"  ret Ok(config.get(key).unwrap_or(\"{default}\"))", "}", "",
                 f"match {fn}(\"{file}\", \"{key}\") {{", f"  Ok(value) -> print(\"{key} = \" + value)",
                 "  Error(msg) -> print(\"bad config: \" + msg)", "}")
    prompt = pick(rng, f"Read {file} and print its \"{key}\" setting, or \"{default}\" when the key is absent.",
                  f"Load the {t.key} config file ({file}, JSON) and show the value of {key}.")
    return Program(code, (prompt,), "script_json_config", 2, "`json.parse` yields a `Map[str, str]`, so `get` returns an Option.")


def _run_each(rng: random.Random, t: Theme) -> Program:
    cmd, flag = rng.choice((("ping", "-c1"), ("curl", "-sI"), ("dig", "+short"), ("ssh", "-q")))
    hosts = [f"{t.key}-{c}.local" for c in rng.sample("abcdef", rng.randint(2, 4))]
    code = lines("import std.process", "", f"let hosts = [{', '.join(chr(34) + h + chr(34) for h in hosts)}]", "let mut failures = 0",
                 "for host in hosts {", f"  match process.run(\"{cmd}\", [\"{flag}\", host]) {{", "    Ok(_) -> print(host + \" ok\")",
                 "    Error(msg) -> {", "      print(host + \" failed: \" + msg)", "      failures += 1", "    }", "  }", "}",
                 "print(str(failures) + \" of \" + str(len(hosts)) + \" hosts failed\")")
    prompt = pick(rng, f"Run `{cmd} {flag}` against each of {', '.join(hosts)} and count how many fail.",
                  f"Script: for the {t.key} hosts ({len(hosts)} of them), call {cmd} {flag} and print a summary of failures.")
    return Program(code, (prompt,), "script_process_loop", 2, "Each `process.run` result is matched so one failure does not stop the loop.")


def _count_files(rng: random.Random, t: Theme) -> Program:
    var, d = _env_name(t, pick(rng, "DIR", "PATH", "ROOT")), _data_dir(rng, t)
    code = lines("import std.fs", "import std.env", "", f"let dir = env.get(\"{var}\").unwrap_or(\"{d}\")",
                 "match fs.list(dir) {", "  Ok(names) -> print(dir + \" has \" + str(len(names)) + \" files\")",
                 "  Error(msg) -> print(\"cannot list \" + dir + \": \" + msg)", "}")
    prompt = pick(rng, f"How many files are in the {t.key} data folder? The folder comes from {var}, else {d}.",
                  f"Count the files in the directory named by {var} (default {d}) and print the number.")
    return Program(code, (prompt,), "script_count_files", 1, "`fs.list` returns `Result[List[str]]`.")


def _grep_log(rng: random.Random, t: Theme) -> Program:
    log = pick(rng, f"{t.key}.log", f"logs/{t.key}.log", f"/var/log/{t.key}/app.log")
    words_ = rng.sample(("ERROR", "WARN", "timeout", "denied", "retry"), rng.randint(1, 2))
    cond = " or ".join(f"line.contains(\"{w}\")" for w in words_)
    code = lines("import std.fs", "", f"match fs.read(\"{log}\") {{", "  Ok(content) -> {", "    let mut hits = 0",
                 "    for line in content.split(\"\\n\") {", f"      if {cond} {{", "        print(line)", "        hits += 1", "      }",
                 "    }", "    print(str(hits) + \" matching lines\")", "  }", f"  Error(msg) -> print(\"cannot read {log}: \" + msg)", "}")
    which = " or ".join(words_)
    prompt = pick(rng, f"Print every line of {log} that mentions {which}, then the number of such lines.",
                  f"Scan the {t.key} log ({log}) for {which} and show the matches with a count.")
    return Program(code, (prompt,), "script_grep", 2, "`split` breaks the file into lines and `contains` tests each one.")


def _post_status(rng: random.Random, t: Theme) -> Program:
    url = f"https://hooks.example.com/{t.key}/{pick(rng, 'status', 'events', 'notify')}"
    code = lines("import std.http", "import std.json", "import std.time", "",
                 f"let payload = json.dump({{ service: \"{t.key}\", at: str(time.now()), {t.count}: \"{rng.randint(1, 99)}\" }})",
                 f"match http.post(\"{url}\", payload) {{", "  Ok(reply) -> print(\"sent: \" + reply)",
                 "  Error(msg) -> print(\"post failed: \" + msg)", "}")
    prompt = pick(rng, f"Send a JSON status update (service name, current time, {t.count}) to {url}.",
                  f"Post a small JSON message about the {t.key} service to {url} and print the reply.")
    return Program(code, (prompt,), "script_http_post", 2, "`json.dump` turns the record into text for `http.post`.")


__all__ = ["automation", "script_pairs"]
