-- The LuaRocks package of the LuaJIT binding. Build and install it from this
-- directory with `luarocks make` (add --local, or --tree DIR); `luarocks make
-- --pack-binary-rock` also writes the artefact, cupel-0.2.0-1.all.rock, which
-- `luarocks install` takes anywhere. The native library is not in the rock:
-- cupel.lua loads $CUPEL_LIB, else libcupel from the system's search path.
rockspec_format = "3.0"
package = "cupel"
version = "0.2.0-1"
source = {
  -- No source archive is published: the rock is built from this directory,
  -- and `luarocks make` does not fetch source.url.
  url = "file://.",
}
description = {
  summary = "libcupel for LuaJIT: fit scored context into a language model's token budget",
  detailed = [[
The Cupel context pipeline (score, deduplicate, slice, place, explain) from
LuaJIT through ffi, for Neovim plugins and any LuaJIT host, with exact token
counting and truncation (o200k_base, cl100k_base, any tiktoken file): 1-based
indices and byte positions, collector-freed handles, errors as tables. Needs LuaJIT (the ffi module) and
the libcupel shared library.]],
  license = "MIT",
}
dependencies = {
  "lua ~> 5.1", -- LuaJIT is Lua 5.1 to LuaRocks; cupel.lua needs its ffi module
}
build = {
  type = "builtin",
  modules = {
    cupel = "cupel.lua",
  },
  install = {
    -- The ffi declarations, which cupel.lua reads from its own directory:
    -- installed beside it, as <tree>/share/lua/5.1/cupel_cdef.h.
    lua = {
      cupel_cdef = "cupel_cdef.h",
    },
  },
  copy_directories = {},
}
