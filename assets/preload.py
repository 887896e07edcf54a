"""Imported once by the corpus backfill's forkserver (``start_method: forkserver``, ``preload_modules``):
loads Dagster, the definitions and the Vox front end and builds the front end's lazy state (grammar,
tables), so each partition step forked from it starts warm instead of paying seconds for that again."""

import assets.definitions  # noqa: F401  (the definitions every step process reconstructs its job from)
from pipeline.parallel import warm_front_end

warm_front_end()

from assets.defs.corpus_backfill import backfill_job  # noqa: E402

backfill_job()  # resolved once here; every forked step process inherits it
