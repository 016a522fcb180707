"""The workbench's pages, one module per page, each with a Flask blueprint ``bp``."""
