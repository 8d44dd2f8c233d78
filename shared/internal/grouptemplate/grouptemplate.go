// Package grouptemplate measures what adding an endpoint group costs: its
// test copies the repository, adds a throw-away group from the template in
// testdata (one route, one queue worker, its queue, one managed service, one
// webhook event, one scope) and the lines the README's "Adding an endpoint group"
// lists, and proves the copy builds and passes the checks those lines feed.
// docs/testing.md has the numbers.
package grouptemplate
