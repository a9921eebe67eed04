-- Read URI index states (frontier inspection). ARGV: P, uk...
-- Returns one state per uk, false for none.
local out = {}
for i = 2, #ARGV do out[#out + 1] = ixget(ARGV[i]) end
return out
