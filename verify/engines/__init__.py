"""The formula AST evaluated in independent ways, sharing nothing but the AST.

* ``oracle``: one point at a time, Python integers, C semantics (the reference).
* ``vector``: the whole domain at once with numpy arrays, the same semantics.
* ``smt``: Z3 bit-vector terms over symbolic points, plus the solver helpers.
"""
