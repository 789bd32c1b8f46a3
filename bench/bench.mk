# The benchmarks (included by the Makefile). Every command is under bench/;
# each benchmark's server role runs pinned to core 0 and its load to core 1
# (taskset, from util-linux), over loopback.

BENCH    ?= .
PKG      ?= ./...

# End-to-end load (bench-e2e): scenarios CONNSxINFLIGHTxNODES (echo: the TCP
# echo baseline, the floor under 1x1), the warm-up and measured window of
# each, extra flags of the server role (e.g. E2E_SERVER_FLAGS=-cpuprofile=/tmp/srv.pprof,
# or -spin=50us: uasc Config.ReadSpin) and of the load role (E2E_LOAD_FLAGS,
# e.g. -spin=1ms: the 1x1 client polls its socket), E2E_SECURITY the
# security of each run (None, or POLICY/MODE) and E2E=0 to leave it out of
# `make bench`.
E2E           ?= 1
E2E_SECURITY  ?= None Basic256Sha256/Sign Basic256Sha256/SignAndEncrypt
E2E_SCENARIOS ?= 10x100x1,10x100x100,1x1x1,1x1x100,echo
E2E_WARMUP    ?= 1s
E2E_DURATION  ?= 5s
E2E_SERVER_FLAGS ?=
E2E_LOAD_FLAGS   ?=
E2E_TIMEOUT   ?= 600

# Side by side with a peer server (bench-peer): the open62541 v1.5.7 server
# from ../shared/peers, built here at -O2 (bench/uabench/peer/open62541_server.c:
# 120 variables and a counter counted every 5 ms), against edged with its
# simulator (its scan at 5 ms), each pinned to core 0, `uabench peer` on
# core 1 measuring both alike from /proc, alternately, PEER_ROUNDS rounds:
# idle, pipelined and 1×1 Reads, an open loop of 5,000 Reads/s, a 5 ms
# subscription, memory. bench-peer-secure: the Read loads of PEER_SCENARIOS
# for each of PEER_SECURITY (None, or POLICY/MODE) on `uabench server` and
# on open62541.
OPEN62541     ?= ../shared/peers/open62541-1.5.7
PEER_ROUNDS    ?= 3
PEER_FLAGS     ?=
PEER_SCENARIOS ?= 10x100x1,1x1x1
PEER_SECURITY  ?= None Basic256Sha256/Sign Basic256Sha256/SignAndEncrypt ECC_nistP256/SignAndEncrypt
PEER_PORT      ?= 48491
PEER_EDGED_PORT ?= 48492
PEER_FLOOR_PORT ?= 48494
# PEER_EDGED_FLAGS: more flags of edged, e.g. --poller or --sim-in-memory=false.
PEER_EDGED_FLAGS ?=
PEER_EDGED_READ := ns=2;s=sim.Sine,ns=2;s=sim.Counter,ns=2;s=sim.Toggle,ns=2;s=sim.Ramp,ns=2;s=sim.Setpoint,ns=2;s=sim.Command,ns=2;s=sim.Status,ns=2;s=io.DI1,ns=2;s=io.DI2,ns=2;s=io.DI3,ns=2;s=io.DI4,ns=2;s=io.DO1,ns=2;s=io.DO2,ns=2;s=io.DO3,ns=2;s=io.DO4
PEER_OPEN62541_READ := $(shell for i in 0 1 2 3 4; do printf 'ns=1;s=Gateway.D00%s,ns=1;s=Gateway.U00%s,ns=1;s=Gateway.B00%s,' $$i $$i $$i; done | sed 's/,$$//')

# Memory (bench-memory): edged with MEM_DEVICES simulated devices of
# MEM_TAGS tags each (uabench genconfig), pinned to core 0: its RSS idle,
# then with MEM_SESSIONS sessions each reading MEM_NODES tags of its own.
MEM_DEVICES  ?= 10
MEM_TAGS     ?= 1000
MEM_SESSIONS ?= 50
MEM_NODES    ?= 100
MEM_PORT     ?= 48493

# Scan cycle under OPC UA load (bench-scan): the measured window and warm-up,
# the clients and tags per client's Read, and SCAN=0 to leave it out of
# `make bench`.
SCAN          ?= 1
SCAN_DURATION ?= 60s
SCAN_WARMUP   ?= 5s
SCAN_CLIENTS  ?= 10
SCAN_NODES    ?= 100
# SCAN_APPLIES: configuration changes applied live in the window (0: none).
SCAN_APPLIES  ?= 0

# History (bench-history): bench-scan's run three times, HIST_DURATION
# each: with HIST_BULK more tags in the 1 s class without history, the same
# recording them every second and the simulator's tags on every change,
# and the simulator's tags alone as its configuration records them (its
# mix); cycle, overruns, RSS, the store's bytes and writes.
HIST_DURATION ?= 60s
HIST_BULK     ?= 10000

# Alarms (bench-alarms): bench-scan's run with ALARM_TAGS more tags on the
# 5 ms cycle, ALARM_DURATION each: without alarms and with a High limit
# alarm on each, never crossed (the evaluation alone), alternating,
# ALARM_ROUNDS times each; then once with the limit crossed all the time
# by most of them (a storm); the cycle's p99 and the RSS side by side.
ALARM_DURATION ?= 60s
ALARM_TAGS     ?= 10000
ALARM_ROUNDS   ?= 3

# Subscription latency (bench-sub): the measured window of the publish
# latency run and its warm-up, the repetitions of the write → status and
# call → status runs, extra flags (SUB_FLAGS, e.g. -inflight 8 -queue 20),
# and SUB=0 to leave it out of `make bench`.
SUB          ?= 1
SUB_DURATION ?= 10s
SUB_WARMUP   ?= 1s
SUB_REPS     ?= 1000
SUB_FLAGS    ?=

# Subscription fan-out (bench-fanout): sessions × monitored items on 1,000
# tags that change every cycle, the measured window and warm-up, and extra
# flags (FANOUT_FLAGS, e.g. '-publish 10ms -queue 1 -inflight 3'; see
# bench/fanbench), and FANOUT=0 to leave it out of `make bench`.
FANOUT          ?= 1
FANOUT_SESSIONS ?= 20
FANOUT_ITEMS    ?= 1000
FANOUT_DURATION ?= 30s
FANOUT_WARMUP   ?= 5s
FANOUT_FLAGS    ?=

# Sparkplug B (bench-sparkplug): the simulator at 5 ms and SPARK_BULK tags
# read every second, without and with the northbound to mosquitto,
# alternating SPARK_ROUNDS times, SPARK_DURATION each; the floor of one
# publish every 5 ms; then the broker stopped for SPARK_OUTAGE and the
# forwarding timed (SPARK_OUTAGE=0: not).
SPARK_DURATION ?= 30s
SPARK_ROUNDS   ?= 3
SPARK_BULK     ?= 10000
SPARK_OUTAGE   ?= 10m

# WAKE_FOR: how long bench-wake measures.
WAKE_FOR      ?= 10m

.PHONY: bench-sparkplug bench-help bench bench-two-cores bench-wake bench-e2e bench-peer bench-peer-scada bench-peer-events bench-peer-secure bench-peer-handshake bench-memory bench-scan bench-history bench-alarms bench-sub bench-fanout bench-always

bench-help:
	@echo "make bench-wake      how late this machine wakes an idle 5 ms sleeper, for WAKE_FOR=$(WAKE_FOR): the floor under the scan's overruns"
	@echo "make bench           benchmarks (BENCH=regexp PKG=./path/...), then bench-e2e (E2E=0: not), bench-scan (SCAN=0: not), bench-sub (SUB=0: not) and bench-fanout (FANOUT=0: not)"
	@echo "make bench-e2e       end-to-end OPC UA load on loopback, server on core 0, load on core 1"
	@echo "make bench-peer      edged (with its simulator) and the open62541 v1.5.7 server side by side, PEER_ROUNDS=$(PEER_ROUNDS) rounds: idle, Reads, open loop, subscription, memory; ratios and targets"
	@echo "make bench-peer-scada  the SCADA scenarios S1–S4 of bench-peer alone: 10,000 variables, a tenth changing every 100 ms, sessions subscribed to them; PEER_ROUNDS rounds"
	@echo "make bench-peer-events  the two servers raising PEER_EVENTS=$(PEER_EVENTS) events every 5 ms, a client subscribed to them: latency, server CPU per event; PEER_ROUNDS rounds"
	@echo "make bench-peer-secure  the Read loads on uabench's server and on open62541 for each of PEER_SECURITY"
	@echo "make bench-peer-handshake  server CPU per OpenSecureChannel, edged's stack and open62541, for PEER_HS_POLICIES=$(PEER_HS_POLICIES), Sign and SignAndEncrypt"
	@echo "make bench-memory    edged's RSS with $(MEM_DEVICES)×$(MEM_TAGS) simulated tags, idle and with $(MEM_SESSIONS) sessions reading"
	@echo "make bench-scan      5 ms scan of 1,000 simulated tags under 10 OPC UA clients, $(SCAN_DURATION); cycle/jitter/overruns/CPU"
	@echo "make bench-history   bench-scan with $(HIST_BULK) tags at 1 s: without history, recording them and the simulator's tags; then the simulator's mix alone ($(HIST_DURATION) each)"
	@echo "make bench-alarms    bench-scan with $(ALARM_TAGS) more tags on the 5 ms cycle: without and with a limit alarm on each, alternating $(ALARM_ROUNDS) times, then in a storm ($(ALARM_DURATION) each)"
	@echo "make bench-sub       subscription latency at 5 ms: image publish → Publish response, Write/Call → Status data change ($(SUB_REPS) each)"
	@echo "make bench-sparkplug the Sparkplug B edge node: $(SPARK_BULK) tags a second and the simulator, without and with it, $(SPARK_ROUNDS) rounds; then a $(SPARK_OUTAGE) broker outage forwarded"
	@echo "make bench-fanout    $(FANOUT_SESSIONS) sessions × $(FANOUT_ITEMS) items on tags changing every 5 ms cycle, $(FANOUT_DURATION); notifications/s, lost, CPU"

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem $(PKG)
ifneq ($(E2E),0)
	@$(MAKE) --no-print-directory bench-e2e
endif
ifneq ($(SCAN),0)
	@$(MAKE) --no-print-directory bench-scan
endif
ifneq ($(SUB),0)
	@$(MAKE) --no-print-directory bench-sub
endif
ifneq ($(FANOUT),0)
	@$(MAKE) --no-print-directory bench-fanout
endif

# The benchmarks that pin the server to core 0 and the load to core 1.
bench-two-cores:
	@if [ "$$(nproc --all)" -lt 2 ]; then echo "$(MAKECMDGOALS): needs 2 cores (the server on core 0, the load on core 1)" >&2; exit 1; fi

# The bench commands, built every time (go build keeps what is current).
bench-always:
$(BIN)/uabench $(BIN)/fanbench $(BIN)/subbench $(BIN)/scanbench $(BIN)/sparkbench: bench-always
	$(GO) build -buildvcs=false -o $@ ./bench/$(notdir $@)

$(BIN)/open62541.o: $(OPEN62541)/open62541.c
	@mkdir -p $(BIN)
	cc -O2 -c $< -o $@

$(BIN)/open62541_server: bench/uabench/peer/open62541_server.c $(BIN)/open62541.o
	cc -O2 -I $(OPEN62541) $< $(BIN)/open62541.o -lssl -lcrypto -lpthread -lm -o $@

$(BIN)/floor_server: bench/uabench/peer/floor_server.c
	@mkdir -p $(BIN)
	cc -O2 -Wall $< -o $@

$(BIN)/floor.bin: $(BIN)/uabench
	./$(BIN)/uabench floorgen $@

# Handshakes side by side (bench-peer-handshake): `uabench handshake` on
# core 1 opens secure channels one after the other (connect, Hello,
# OpenSecureChannel, CloseSecureChannel) to `uabench server` (edged's
# stack, its accept pacing off) and to open62541, each on core 0,
# alternately PEER_ROUNDS times per policy and mode: the server's CPU per
# handshake from its own account, and the ratio of the medians.
PEER_HANDSHAKES ?= 300
PEER_HS_POLICIES ?= Basic256Sha256,ECC_nistP256,ECC_nistP384,ECC_curve25519,ECC_nistP256_AesGcm,ECC_nistP256_ChaChaPoly
bench-peer-handshake: bench-two-cores $(BIN)/open62541_server $(BIN)/uabench
	./$(BIN)/uabench peercert urn:open62541.unconfigured.application $(BIN)/peer-pki
	@for mode in Sign SignAndEncrypt; do \
		echo "== bench-peer-handshake: $$mode"; \
		PEER_NISTP256_CERT=$(BIN)/peer-pki/nistP256.der PEER_NISTP256_KEY=$(BIN)/peer-pki/nistP256-key.der \
		PEER_NISTP384_CERT=$(BIN)/peer-pki/nistP384.der PEER_NISTP384_KEY=$(BIN)/peer-pki/nistP384-key.der \
		PEER_CURVE25519_CERT=$(BIN)/peer-pki/curve25519.der PEER_CURVE25519_KEY=$(BIN)/peer-pki/curve25519-key.der \
		timeout --kill-after=10 600 taskset -c 1 ./$(BIN)/uabench handshake -mode $$mode -n $(PEER_HANDSHAKES) -rounds $(PEER_ROUNDS) \
			-policies $(PEER_HS_POLICIES) -server 'taskset -c 0 ./$(BIN)/uabench server -secure -accept-rate -1' \
			-peer 'taskset -c 0 ./$(BIN)/open62541_server $(PEER_PORT) $(BIN)/peer-pki/cert.der $(BIN)/peer-pki/key.der' 2>/dev/null \
			| grep -E '^  handshake' || exit 1; \
	done

bench-wake:
	$(GO) run ./bench/wakeup -for $(WAKE_FOR)

# The load starts and stops the server; each scenario is bounded and the
# whole run is cut off after E2E_TIMEOUT seconds.
bench-e2e: bench-two-cores $(BIN)/uabench
	@for sec in $(E2E_SECURITY); do \
		policy=$${sec%%/*}; mode=$${sec#*/}; [ "$$mode" = "$$sec" ] && mode=SignAndEncrypt; \
		echo "== bench-e2e: $$sec"; \
		timeout --kill-after=10 $(E2E_TIMEOUT) taskset -c 1 ./$(BIN)/uabench load $(E2E_LOAD_FLAGS) -policy $$policy -mode $$mode \
			-server 'taskset -c 0 ./$(BIN)/uabench server $(E2E_SERVER_FLAGS)' \
			-scenarios '$(E2E_SCENARIOS)' -warmup $(E2E_WARMUP) -duration $(E2E_DURATION) || exit 1; \
	done

bench-peer: bench-two-cores build $(BIN)/open62541_server $(BIN)/uabench $(BIN)/floor_server $(BIN)/floor.bin
	./$(BIN)/uabench peercert urn:open62541.unconfigured.application $(BIN)/peer-pki
	rm -rf $(BIN)/peer-edged
	timeout --kill-after=10 1200 taskset -c 1 ./$(BIN)/uabench peer -rounds $(PEER_ROUNDS) -aa $(PEER_FLAGS) \
		-floor 'taskset -c 0 ./$(BIN)/floor_server $(PEER_FLOOR_PORT) $(BIN)/floor.bin' -floor-addr 127.0.0.1:$(PEER_FLOOR_PORT) \
		-edged 'taskset -c 0 ./$(BIN)/edged --data-dir $(BIN)/peer-edged --listen 127.0.0.1:$(PEER_EDGED_PORT) --allow-insecure $(PEER_EDGED_FLAGS)' \
		-edged-addr 127.0.0.1:$(PEER_EDGED_PORT) -edged-read '$(PEER_EDGED_READ)' -edged-counter 'ns=2;s=sim.Counter' \
		-peer 'taskset -c 0 ./$(BIN)/open62541_server $(PEER_PORT) $(BIN)/peer-pki/cert.der $(BIN)/peer-pki/key.der' \
		-peer-addr 127.0.0.1:$(PEER_PORT) -peer-read '$(PEER_OPEN62541_READ)' -peer-counter 'ns=1;s=Counter'
	@$(MAKE) --no-print-directory bench-peer-scada

# The SCADA scenarios (bench-peer-scada, run by bench-peer): both servers
# serve 10,000 UInt16 variables of which a tenth change every 100 ms, by
# the wall clock (edged: 10 devices of 1,000 tags on its simulator's churn
# bank, `uabench genconfig -churn`, scanned every 100 ms for S1–S3 and
# every 5 ms for S4; open62541: its bulk=10000 variables, the same logic),
# and sessions subscribe to them: S1 10×1,000 items, 100 ms sampling,
# 1 s publishing, None; S2 the same over Basic256Sha256 SignAndEncrypt; S3
# 50×200, 250/500 ms, SignAndEncrypt; S4 1×10,000 at 5/5 ms, None.
SCADA_RUNS ?= slow:s1,s2,s3 fast:s4
bench-peer-scada: bench-two-cores build $(BIN)/open62541_server $(BIN)/uabench
	./$(BIN)/uabench peercert urn:open62541.unconfigured.application $(BIN)/peer-pki
	@for run in $(SCADA_RUNS); do \
		class=$${run%%:*}; phases=$${run#*:}; \
		./$(BIN)/uabench genconfig -devices 10 -tags 1000 -class $$class -churn > $(BIN)/scada-$$class.json || exit 1; \
		rm -rf $(BIN)/peer-scada; \
		echo "== bench-peer-scada: $$phases, edged's 10,000 tags in scan class $$class"; \
		timeout --kill-after=10 1500 taskset -c 1 ./$(BIN)/uabench peer -rounds $(PEER_ROUNDS) -only idle,$$phases $(PEER_FLAGS) \
			-edged "taskset -c 0 ./$(BIN)/edged --data-dir $(BIN)/peer-scada --listen 127.0.0.1:$(PEER_EDGED_PORT) --allow-insecure --config $(BIN)/scada-$$class.json $(PEER_EDGED_FLAGS)" \
			-edged-addr 127.0.0.1:$(PEER_EDGED_PORT) -edged-read 'ns=2;s=sim.Counter' -edged-counter 'ns=2;s=sim.Counter' \
			-edged-bulk 'ns=2;s=bulk%[1]d.T%04[2]d' -edged-trust $(BIN)/peer-scada -edged-overruns 'ns=3;s=Diagnostics.Overruns' \
			-peer 'taskset -c 0 ./$(BIN)/open62541_server $(PEER_PORT) $(BIN)/peer-pki/cert.der $(BIN)/peer-pki/key.der bulk=10000' \
			-peer-addr 127.0.0.1:$(PEER_PORT) -peer-read 'ns=1;s=Counter' -peer-counter 'ns=1;s=Counter' -peer-bulk 'ns=1;s=Bulk.T%05[3]d' || exit 1; \
	done

# bench-peer-events: the same two servers raising PEER_EVENTS events every
# 5 ms (edged: off-normal alarms on the simulator counter's lowest bit, of
# `uabench genconfig -tick-alarms`; open62541: events of the Server object
# from its 5 ms callback), a client subscribed to the Server object's
# events with 5 ms publishing: latency, and server CPU per event.
PEER_EVENTS ?= 1
bench-peer-events: bench-two-cores build $(BIN)/open62541_server $(BIN)/uabench
	./$(BIN)/uabench peercert urn:open62541.unconfigured.application $(BIN)/peer-pki
	./$(BIN)/uabench genconfig -devices 0 -tick-alarms $(PEER_EVENTS) > $(BIN)/peer-events.json
	rm -rf $(BIN)/peer-edged
	timeout --kill-after=10 $(E2E_TIMEOUT) taskset -c 1 ./$(BIN)/uabench peer -rounds $(PEER_ROUNDS) -only idle,events $(PEER_FLAGS) \
		-edged 'taskset -c 0 ./$(BIN)/edged --data-dir $(BIN)/peer-edged --listen 127.0.0.1:$(PEER_EDGED_PORT) --allow-insecure --config $(BIN)/peer-events.json $(PEER_EDGED_FLAGS)' \
		-edged-addr 127.0.0.1:$(PEER_EDGED_PORT) -edged-read '$(PEER_EDGED_READ)' -edged-counter 'ns=2;s=sim.Counter' \
		-peer 'taskset -c 0 ./$(BIN)/open62541_server $(PEER_PORT) $(BIN)/peer-pki/cert.der $(BIN)/peer-pki/key.der events=$(PEER_EVENTS)' \
		-peer-addr 127.0.0.1:$(PEER_PORT) -peer-read '$(PEER_OPEN62541_READ)' -peer-counter 'ns=1;s=Counter'

bench-memory: build $(BIN)/uabench
	./$(BIN)/uabench genconfig -devices $(MEM_DEVICES) -tags $(MEM_TAGS) > $(BIN)/mem-config.json
	rm -rf $(BIN)/mem-edged
	timeout --kill-after=10 300 taskset -c 1 ./$(BIN)/uabench memory -devices $(MEM_DEVICES) -tags $(MEM_TAGS) \
		-sessions $(MEM_SESSIONS) -nodes $(MEM_NODES) -addr 127.0.0.1:$(MEM_PORT) \
		-edged 'taskset -c 0 ./$(BIN)/edged --config $(BIN)/mem-config.json --data-dir $(BIN)/mem-edged --listen 127.0.0.1:$(MEM_PORT) --allow-insecure --max-connections 200'

bench-peer-secure: bench-two-cores $(BIN)/open62541_server $(BIN)/uabench
	./$(BIN)/uabench peercert urn:open62541.unconfigured.application $(BIN)/peer-pki
	@for sec in $(PEER_SECURITY); do \
		policy=$${sec%%/*}; mode=$${sec#*/}; [ "$$mode" = "$$sec" ] && mode=SignAndEncrypt; \
		for srv in edged open62541; do \
			if [ $$srv = edged ]; then cmd='taskset -c 0 ./$(BIN)/uabench server'; \
			else cmd='taskset -c 0 ./$(BIN)/open62541_server $(PEER_PORT) $(BIN)/peer-pki/cert.der $(BIN)/peer-pki/key.der'; fi; \
			echo "== bench-peer-secure: $$srv, $$sec"; \
			PEER_NISTP256_CERT=$(BIN)/peer-pki/nistP256.der PEER_NISTP256_KEY=$(BIN)/peer-pki/nistP256-key.der \
			PEER_NISTP384_CERT=$(BIN)/peer-pki/nistP384.der PEER_NISTP384_KEY=$(BIN)/peer-pki/nistP384-key.der \
		PEER_CURVE25519_CERT=$(BIN)/peer-pki/curve25519.der PEER_CURVE25519_KEY=$(BIN)/peer-pki/curve25519-key.der \
			timeout --kill-after=10 $(E2E_TIMEOUT) taskset -c 1 ./$(BIN)/uabench load -policy $$policy -mode $$mode \
				-server "$$cmd" -scenarios '$(PEER_SCENARIOS)' -warmup $(E2E_WARMUP) -duration $(E2E_DURATION) 2>/dev/null \
				| grep -E '^ +(scenario|[0-9]+×)' || exit 1; \
		done; \
	done

# The edged side (simulator, drivers, scan engine, OPC UA server) runs in
# the bench command pinned to core 0, the clients in its child process on
# core 1.
bench-scan: bench-two-cores $(BIN)/scanbench
	timeout --kill-after=10 600 taskset -c 0 ./$(BIN)/scanbench -duration $(SCAN_DURATION) -warmup $(SCAN_WARMUP) \
		-clients $(SCAN_CLIENTS) -nodes $(SCAN_NODES) -applies $(SCAN_APPLIES) -load-prefix 'taskset -c 1'

bench-history: bench-two-cores $(BIN)/scanbench
	@for run in "-bulk $(HIST_BULK)" "-bulk $(HIST_BULK) -history change" "-history sim"; do \
		echo "== bench-history: $$run"; \
		timeout --kill-after=10 600 taskset -c 0 ./$(BIN)/scanbench -duration $(HIST_DURATION) -warmup $(SCAN_WARMUP) \
			-clients $(SCAN_CLIENTS) -nodes $(SCAN_NODES) -load-prefix 'taskset -c 1' $$run || exit 1; \
	done

bench-alarms: bench-two-cores $(BIN)/scanbench
	@runs=""; for r in $$(seq $(ALARM_ROUNDS)); do runs="$$runs none -alarms"; done; \
	for run in $$runs "-alarms -alarm-high 32768"; do \
		[ "$$run" = none ] && run=""; \
		echo "== bench-alarms: -bulk $(ALARM_TAGS) -bulk-class fast $$run"; \
		timeout --kill-after=10 600 taskset -c 0 ./$(BIN)/scanbench -duration $(ALARM_DURATION) -warmup $(SCAN_WARMUP) \
			-clients $(SCAN_CLIENTS) -nodes $(SCAN_NODES) -load-prefix 'taskset -c 1' -bulk $(ALARM_TAGS) -bulk-class fast $$run || exit 1; \
	done

bench-sub: bench-two-cores $(BIN)/subbench
	timeout --kill-after=10 600 taskset -c 0 ./$(BIN)/subbench -duration $(SUB_DURATION) -warmup $(SUB_WARMUP) \
		-reps $(SUB_REPS) $(SUB_FLAGS) -client-prefix 'taskset -c 1'

bench-sparkplug: bench-two-cores $(BIN)/sparkbench
	timeout --kill-after=10 3600 taskset -c 0 ./$(BIN)/sparkbench -duration $(SPARK_DURATION) -rounds $(SPARK_ROUNDS) -bulk $(SPARK_BULK) \
		-load-prefix 'taskset -c 1' -broker-prefix 'taskset -c 1'
	timeout --kill-after=10 600 taskset -c 0 ./$(BIN)/sparkbench -floor -duration 10s -rounds $(SPARK_ROUNDS) \
		-load-prefix 'taskset -c 1' -broker-prefix 'taskset -c 1'
ifneq ($(SPARK_OUTAGE),0)
	timeout --kill-after=10 3600 taskset -c 0 ./$(BIN)/sparkbench -outage $(SPARK_OUTAGE) -load-prefix 'taskset -c 1' -broker-prefix 'taskset -c 1'
endif

bench-fanout: bench-two-cores $(BIN)/fanbench
	timeout --kill-after=10 600 taskset -c 0 ./$(BIN)/fanbench -duration $(FANOUT_DURATION) -warmup $(FANOUT_WARMUP) \
		-sessions $(FANOUT_SESSIONS) -items $(FANOUT_ITEMS) -load-prefix 'taskset -c 1' $(FANOUT_FLAGS)
