# Cuts one .sand file into seeds of at most `max` bytes for the text targets: consecutive
# top-level items are packed together (definitions stay beside their uses, so many seeds still
# compile) and an item too large to fit is replaced by its own items (a section's body, packed
# the same way). A seed libFuzzer would truncate at -max_len is a broken file, and every
# mutant of it goes through error recovery instead of the ordinary parse.
function flush() {
  if (chunk != "") { n++; printf "%s", chunk > (out "." n); close(out "." n) }
  chunk = ""
}
function add(text) {
  if (length(text) > max) return
  if (length(chunk) + length(text) > max) flush()
  chunk = chunk text
}
function end_unit(   i) {
  if (unit == "") return
  if (length(unit) <= max) add(unit)
  else { flush(); for (i = 1; i <= nsub; i++) add(sub_[i]); flush() }
  unit = ""; nsub = 0
}
# Braces on a line outside strings and `//` comments.
function braces(line,   i, c, d, instr) {
  d = 0; instr = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (instr) { if (c == "\\") i++; else if (c == "\"") instr = 0; continue }
    if (c == "\"") instr = 1
    else if (c == "/" && substr(line, i + 1, 1) == "/") break
    else if (c == "{") d++
    else if (c == "}") d--
  }
  return d
}
BEGIN { depth = 0; n = 0; nsub = 0 }
{
  line = $0 "\n"
  body = $0; sub(/^[ \t]+/, "", body)
  item = body != "" && body !~ /^\/\// && body !~ /^}/
  if (depth == 0 && item) end_unit()
  if (depth == 1 && item && body ~ /^(rule|side|enum|kind|unit|weapon|terrain|marker|die|stack|table|resolve|action|procedure|scenario|board|turn|phase|activation|force|note|see|assume|section|chapter)[^A-Za-z0-9_]/) sub_[++nsub] = ""
  unit = unit line
  if (depth >= 1 && nsub > 0 && !(depth + braces($0) == 0)) sub_[nsub] = sub_[nsub] line
  depth += braces($0)
  if (depth < 0) depth = 0
}
END { end_unit(); flush() }
