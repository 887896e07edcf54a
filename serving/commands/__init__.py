"""One module per ``vox`` subcommand; each exposes ``register(app)``."""
