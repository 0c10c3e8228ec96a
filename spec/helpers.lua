-- helpers.lua — loaded by busted before every spec file: paths shared by the specs.
local root = os.getenv("PWD") or "."
package.path = root .. "/lua/?.lua;" .. root .. "/lua/?/init.lua;" .. package.path
-- make test's sanitized pass sets PROF_SPEC_LUA_DIR=build/asan-lua (the ASan+UBSan prof.core)
package.cpath = root .. "/" .. (os.getenv("PROF_SPEC_LUA_DIR") or "build/lua") .. "/?.so;" .. package.cpath
