# Turns the dashboard's page template, style and script into C data (html_assets.c), so that
# ctp-cat carries its page and never looks for files at run time.
# Usage: cmake -DSRC=<this folder> -DOUT=<html_assets.c> -P embed.cmake

# A C array of the file's bytes, NUL-terminated; `check` lists strings the file must not hold.
function(embed var file)
  file(READ "${SRC}/${file}" text)
  foreach(bad IN LISTS ARGN)
    string(FIND "${text}" "${bad}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} must not contain '${bad}': it would break the page")
    endif()
  endforeach()
  file(READ "${SRC}/${file}" hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n\t"
    bytes "${bytes}")
  set(c_text "${c_text}/* ${file} */\nconst char ${var}[] = {\n\t${bytes}0x00};\n\n" PARENT_SCOPE)
endfunction()

set(c_text "/* Generated from cat/html/ by cat/html/embed.cmake: do not edit. */\n\n")
# The style and the script go inside <style> and <script> elements: they must not close them.
embed(ctp_html_style dashboard.css "</style" "</STYLE")
embed(ctp_html_script dashboard.js "</script" "</SCRIPT" "<!--")
embed(ctp_html_template dashboard.html)
foreach(marker @CTP_STYLE@ @CTP_DATA@ @CTP_SCRIPT@)
  file(READ "${SRC}/dashboard.html" page)
  string(FIND "${page}" "${marker}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "dashboard.html lacks the marker ${marker}")
  endif()
endforeach()

# Write only when changed, so that ctp-cat is not rebuilt for nothing.
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL c_text)
  file(WRITE "${OUT}" "${c_text}")
endif()
