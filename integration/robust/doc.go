// Package robust holds the robustness suite (`make test-robust`, build tag
// robust): it starts a real edged with its simulator and attacks it over
// loopback as a hostile client on the plant network would, asserting the
// bounds of docs/robustness.md. The package has no code of its own.
package robust
