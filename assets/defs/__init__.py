"""One module per domain: corpus, training, evaluation, export, orchestration, resources."""
