; ci imports query for C: #include "x.h" and #include <x.h>.
; @import is the directive, @target the quoted or bracketed path (ci strips the
; quotes or angle brackets).  A computed #include MACRO is not an import.
(preproc_include
  path: [(string_literal) (system_lib_string)] @target) @import
