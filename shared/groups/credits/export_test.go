package credits

// SweptBefore is sweptBefore for the package's external tests.
var SweptBefore = sweptBefore
