-- helpers.lua — loaded by busted before every spec file: paths shared by the specs.
local root = os.getenv("PWD") or "."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
package.cpath = root .. "/build/lua/?.so;" .. package.cpath
