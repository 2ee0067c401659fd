; ci imports query for C#.  @import is the using directive, @target the namespace
; or type it names (its last named child: after an alias `using A = X.Y;`):
;   using System.Text;  using static System.Math;  using A = X.Y;  -> "System.Text",
;   "System.Math", "X.Y".  A using statement (`using (var r = ...)`) is not an import.
(using_directive
  (_) @target .) @import
