module github.com/edged/edged

go 1.26.0

// gopcua is imported only by test files (opcua/..., cmd/edged), as an
// independent implementation to cross-check our codec and interoperate
// with our server, and by the load role of the bench-only bench/scanbench;
// edged does not link it.
require github.com/gopcua/opcua v0.8.0

require (
	github.com/goburrow/modbus v0.1.0
	github.com/goburrow/serial v0.1.0 // required explicitly: goburrow/modbus v0.1.0 does not resolve without it
	github.com/jonboulle/clockwork v0.5.0 // indirect; periph's gpiotest fakes use it (drivers/gpio's simulated board)
	golang.org/x/crypto v0.59.0 // argon2id password hashes (opcua/users), ChaCha20-Poly1305 (opcua/secpol)
	golang.org/x/sys v0.50.0 // timerfd, epoll and raw socket calls (plc, opcua/server, opcua/uasc), the watchdog (board)
	periph.io/x/conn/v3 v3.7.3
	periph.io/x/host/v3 v3.8.5
)
