"""One thin module per `engramory X`: parse the arguments, call the library, render."""
