-- config-table.lua — prints README.md's configuration table from the config schema:
--   build/bin/profrun configs/default.json scripts/tools/config-table.lua
io.stdout:write(require("prof.config").markdown_table())
