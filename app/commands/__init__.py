"""Sub-commands of the ``taillens`` CLI, one module each (see ``app.cli``)."""
