//go:build !soakfaults

package faults

import (
	"net/http"

	"platformapi/shared/app"
)

// Enabled is false: a build without the soakfaults tag has no hooks.
const Enabled = false

// Apply changes nothing without the soakfaults tag.
func Apply(*app.Runtime) {}

// Wrap is h itself without the soakfaults tag: there is no /_soak route.
func Wrap(h http.Handler, _ *app.Runtime) http.Handler { return h }
