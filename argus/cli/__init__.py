"""The `argus` command: one small module per subcommand, wired together in main.py."""
