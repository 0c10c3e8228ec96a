-- .luacheckrc — luacheck settings: Lua 5.4, busted's globals in specs, 120-column lines (long strings allowed: they are output text).
std = "lua54"
max_line_length = 120
max_string_line_length = false
max_comment_line_length = 120
files["spec/"] = { std = "lua54+busted", max_string_line_length = false }
self = false
exclude_files = { "spec/fixtures/**" }   -- data and deliberately broken scripts
