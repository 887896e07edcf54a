"""YAML that users write (recipes, eval task and check files, executor config), read with one rule
more than ``yaml.safe_load``: a mapping key given twice is an error, not a silent "the later value
wins" (``lr:`` written twice in a section trained with a value its author may not have expected).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml
from yaml.constructor import ConstructorError


class DuplicateKeyError(ConstructorError):
    """A mapping key given twice (a :class:`yaml.YAMLError`, so callers that catch YAML errors
    report it too); ``str()`` is one line: ``line 5, column 3: duplicate key sft.lr (lines 3 and 5) ...``.

    Attributes:
        key_path: where the key is, dotted from the top level (``sft.lr``, ``tasks[2].prompt``).
        first_line: the 1-based line of the first occurrence.
        line: the 1-based line of the later one (``problem_mark`` is its position).
    """

    def __init__(self, key_path: str, first: yaml.Mark, later: yaml.Mark) -> None:
        self.key_path, self.first_line, self.line = key_path, first.line + 1, later.line + 1
        super().__init__(problem=f"duplicate key {key_path} (lines {self.first_line} and {self.line}): the later "
                                 "value would silently replace the first; keep one", problem_mark=later)

    def __str__(self) -> str:
        mark = self.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        return f"{where}{self.problem}"


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that raises :class:`DuplicateKeyError` for a mapping key given twice, at any
    depth. Keys are compared as constructed (``lr`` and ``'lr'`` are one key); a key a merge (``<<:
    *base``) brings may be overridden, as YAML allows."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._paths: dict[int, str] = {}  # id(mapping or sequence node) -> its key path

    def construct_document(self, node: yaml.Node) -> Any:
        """Construct a document after noting where each of its collections is (for messages)."""
        self._paths = _collection_paths(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        """Construct a mapping, refusing a key given twice in it (merged keys aside)."""
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, yaml.Node] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: SafeLoader's own error says so
                    break
                if first is not key_node:
                    prefix = self._paths.get(id(node), "")
                    raise DuplicateKeyError(_join(prefix, key), first.start_mark, key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """Parse one YAML document as ``yaml.safe_load`` does, refusing duplicate mapping keys.

    Args:
        text: the YAML text.

    Returns:
        The document's value (``None`` for an empty document).

    Raises:
        DuplicateKeyError: a mapping key given twice (names its path and both lines).
        yaml.YAMLError: any other invalid YAML.
    """
    loader = UniqueKeyLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _join(prefix: str, key: object) -> str:
    return f"{prefix}.{key}" if prefix else str(key)


def _collection_paths(root: yaml.Node) -> dict[int, str]:
    """The key path of every mapping and sequence node under ``root`` (the first path an alias
    reaches it by; iterative, and each node once, so a recursive alias ends)."""
    paths: dict[int, str] = {}
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        if id(node) in paths or not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            continue
        paths[id(node)] = path
        if isinstance(node, yaml.MappingNode):
            stack.extend((value, _join(path, key.value if isinstance(key, yaml.ScalarNode) else "?"))
                         for key, value in node.value)
        else:
            stack.extend((item, f"{path}[{i}]") for i, item in enumerate(node.value))
    return paths
