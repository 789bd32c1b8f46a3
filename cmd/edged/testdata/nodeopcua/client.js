#!/usr/bin/env node
// Interop client for cmd/edged/nodeopcua_test.go: the node-opcua client
// (pinned in package.json) against a running edged with the simulator.
//
// Usage: node client.js ENDPOINT_URL SCENARIO[,SCENARIO...]
//
// Scenarios (see the functions below): connect, subscribe, transfer,
// write, getmonitoreditems, deadband, republish, history, alarms, secure (which reads its
// certificate, key and user from the environment), owncert (node-opcua's
// own certificate). They run one after another in one
// process (loading node-opcua takes most of a second).
//
// It prints one JSON object per line on stdout ({"scenario": NAME,
// "ev": EVENT, ...}), each scenario ending with "done" or "error"; the Go
// test parses them and asserts on the values. The client only reports what
// it sees; the test decides what is right. Anything node-opcua itself logs
// goes to stderr. Status codes are printed as {"status": name, "code": uint32}.
// Every wait is bounded (a hang guard, not a timing assertion), and on an
// error a scenario prints {"ev": "error"}, the next one runs, and the
// script exits 1.
"use strict";

// node-opcua logs warnings with console.log: keep stdout for our lines.
console.log = console.error;
console.warn = console.error;
console.info = console.error;

const {
  OPCUAClient,
  MessageSecurityMode,
  SecurityPolicy,
  AttributeIds,
  TimestampsToReturn,
  DataType,
  DataChangeFilter,
  DataChangeTrigger,
  DeadbandType,
  BrowseDirection,
  MonitoringMode,
  ClientMonitoredItem,
  AggregateFunction,
  installAlarmMonitoring,
  uninstallAlarmMonitoring,
  callConditionRefresh,
} = require("node-opcua-client");

const [endpointUrl, scenario] = process.argv.slice(2);

// current is the scenario running: every line names it.
let current = "";

function emit(ev, fields) {
  process.stdout.write(JSON.stringify({ scenario: current, ev, ...fields }) + "\n");
}

function st(sc) {
  return { status: sc.name, code: sc.value >>> 0 };
}

// value returns a JSON-safe view of a Variant's value.
function value(v) {
  if (v === null || v === undefined) return null;
  const x = v.value;
  if (x instanceof Date) return x.toISOString();
  if (typeof x === "bigint") return x.toString();
  if (x !== null && typeof x === "object" && x.length !== undefined) return Array.from(x);
  if (x !== null && typeof x === "object") return x.toString();
  return x;
}

function dv(d) {
  return {
    ...st(d.statusCode),
    dataType: DataType[d.value.dataType],
    value: value(d.value),
    sourceTimestamp: d.sourceTimestamp ? d.sourceTimestamp.toISOString() : null,
    serverTimestamp: d.serverTimestamp ? d.serverTimestamp.toISOString() : null,
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// until resolves once cond() holds, checked every 10 ms; it rejects after
// guardMs (a hang guard).
function until(what, cond, guardMs) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const check = () => {
      if (cond()) return resolve();
      if (Date.now() - t0 > guardMs) return reject(new Error(`hang guard: ${what} not within ${guardMs} ms`));
      setTimeout(check, 10);
    };
    check();
  });
}

async function connect() {
  const client = OPCUAClient.create({
    applicationName: "edged-interop-node-opcua",
    endpointMustExist: false,
    securityMode: MessageSecurityMode.None,
    securityPolicy: SecurityPolicy.None,
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    requestedSessionTimeout: 60000,
    keepSessionAlive: false,
  });
  await client.connect(endpointUrl);
  const session = await client.createSession(); // anonymous
  return { client, session };
}

async function disconnect({ client, session }) {
  try {
    await session.close(true);
  } finally {
    await client.disconnect();
  }
}

// subscribe creates a ClientSubscription with the given publishing
// interval through node-opcua's own publish engine.
async function subscribe(session, publishingMs) {
  return session.createSubscription2({
    requestedPublishingInterval: publishingMs,
    requestedLifetimeCount: 6000,
    requestedMaxKeepAliveCount: 200,
    maxNotificationsPerPublish: 0,
    publishingEnabled: true,
    priority: 1,
  });
}

// monitor creates a monitored item on nodeId's Value; onChanged gets its
// data changes from the first on. It is attached before the item is
// created: the first value can come in the same read from the socket as
// the CreateMonitoredItems response, and node-opcua emits it before an
// await on the creation would resume.
function monitor(sub, nodeId, params, onChanged) {
  return new Promise((resolve, reject) => {
    const item = ClientMonitoredItem.create(
      sub,
      { nodeId, attributeId: AttributeIds.Value },
      { samplingInterval: 5, queueSize: 100, discardOldest: true, ...params },
      TimestampsToReturn.Both,
      MonitoringMode.Reporting,
    );
    if (onChanged) item.on("changed", onChanged);
    item.once("initialized", () => resolve(item));
    item.once("err", (err) => reject(new Error(`monitored item on ${nodeId}: ${err}`)));
  });
}

function itemInfo(item) {
  const r = item.result || {};
  return {
    ...st(item.statusCode),
    serverHandle: item.monitoredItemId,
    clientHandle: item.monitoringParameters.clientHandle,
    revisedSamplingInterval: r.revisedSamplingInterval,
    revisedQueueSize: r.revisedQueueSize,
  };
}

// 1. Connect, browse Objects, read sim.Counter and CurrentTime.
async function scenarioConnect() {
  const c = await connect();
  emit("connected", { endpoint: endpointUrl, sessionId: c.session.sessionId.toString() });
  const br = await c.session.browse({
    nodeId: "i=85",
    browseDirection: BrowseDirection.Forward,
    referenceTypeId: "i=33", // HierarchicalReferences
    includeSubtypes: true,
    resultMask: 63,
  });
  emit("browse", {
    ...st(br.statusCode),
    references: (br.references || []).map((r) => ({
      browseName: r.browseName.toString(),
      nodeId: r.nodeId.toString(),
      nodeClass: r.nodeClass,
    })),
  });
  for (let i = 0; i < 2; i++) {
    const res = await c.session.read(
      [
        { nodeId: "ns=2;s=sim.Counter", attributeId: AttributeIds.Value },
        { nodeId: "i=2258", attributeId: AttributeIds.Value }, // Server_ServerStatus_CurrentTime
      ],
      0,
    );
    emit("read", { counter: dv(res[0]), currentTime: dv(res[1]) });
    if (i === 0) await sleep(100);
  }
  await disconnect(c);
}

// 2. Subscribe to sim.Counter at 5 ms; count distinct values over 2 s.
async function scenarioSubscribe() {
  const c = await connect();
  const sub = await subscribe(c.session, 5);
  emit("subscription", {
    subscriptionId: sub.subscriptionId,
    revisedPublishingInterval: sub.publishingInterval,
    revisedMaxKeepAliveCount: sub.maxKeepAliveCount,
  });
  const seen = new Set();
  let notifications = 0;
  let decreasing = 0;
  const recent = []; // the last values, for the report of a decrease
  const decreases = [];
  let last = -1;
  let first = null;
  let counting = false;
  const item = await monitor(sub, "ns=2;s=sim.Counter", { queueSize: 10 }, (d) => {
    const v = d.value.value;
    notifications++;
    recent.push(v);
    if (recent.length > 8) recent.shift();
    if (v < last) {
      decreasing++;
      decreases.push([...recent]);
    }
    last = v;
    if (!counting) return;
    if (first === null) first = v;
    seen.add(v);
  });
  emit("item", itemInfo(item));
  await until("the first value of sim.Counter", () => notifications > 0, 30000);
  counting = true;
  await sleep(2000);
  counting = false;
  const values = [...seen];
  emit("count", {
    distinct: seen.size,
    notifications,
    decreasing,
    decreases,
    first,
    min: Math.min(...values),
    max: Math.max(...values),
  });
  await sub.terminate();
  await disconnect(c);
}

// publishRaw sends one Publish request on a session that has no
// ClientSubscription of its own and returns its response.
function publishRaw(session, acks) {
  return new Promise((resolve, reject) => {
    session.publish({ subscriptionAcknowledgements: acks }, (err, resp) => (err ? reject(err) : resolve(resp)));
  });
}

function counterValues(msg) {
  const out = [];
  for (const n of msg.notificationData || []) {
    if (n && n.schema.name === "DataChangeNotification") {
      for (const m of n.monitoredItems || []) out.push(m.value.value.value);
    }
  }
  return out;
}

// 3. Session A subscribes; session B (another connection, same anonymous
// user) transfers the subscription and receives its notifications; A is
// told Good_SubscriptionTransferred.
async function scenarioTransfer() {
  const a = await connect();
  const b = await connect();
  const sub = await subscribe(a.session, 20);
  const statusChanges = [];
  sub.on("status_changed", (sc) => statusChanges.push(sc));
  // Sequence numbers of A's NotificationMessages, by kind.
  const aSeqs = { data: [], statusChange: [] };
  sub.on("raw_notification", (msg) => {
    for (const n of msg.notificationData || []) {
      if (n && n.schema.name === "DataChangeNotification") aSeqs.data.push(msg.sequenceNumber);
      if (n && n.schema.name === "StatusChangeNotification") aSeqs.statusChange.push(msg.sequenceNumber);
    }
  });
  const aValues = [];
  const item = await monitor(sub, "ns=2;s=sim.Counter", { samplingInterval: 5, queueSize: 10 }, (d) =>
    aValues.push(d.value.value),
  );
  emit("created", { subscriptionId: sub.subscriptionId, item: itemInfo(item) });
  await until("10 values in session A", () => aValues.length >= 10, 30000);

  const tr = await b.session.transferSubscriptions({
    subscriptionIds: [sub.subscriptionId],
    sendInitialValues: true,
  });
  emit("transfer", {
    ...st(tr.responseHeader.serviceResult),
    results: (tr.results || []).map((r) => ({
      ...st(r.statusCode),
      availableSequenceNumbers: Array.from(r.availableSequenceNumbers || []),
    })),
  });
  const aBefore = aValues.length;
  const aLastBefore = aValues[aBefore - 1];
  const aLastSeq = aSeqs.data[aSeqs.data.length - 1];

  // Session B publishes by hand: node-opcua's publish engine only serves
  // subscriptions it created itself.
  const bValues = [];
  const bSeqs = []; // of B's data messages
  const bSubIds = new Set();
  let acks = [];
  let keepAlives = 0;
  const t0 = Date.now();
  while (new Set(bValues).size < 50) {
    if (Date.now() - t0 > 30000) throw new Error("hang guard: 50 values in session B not within 30 s");
    const resp = await publishRaw(b.session, acks);
    bSubIds.add(resp.subscriptionId);
    const msg = resp.notificationMessage;
    const vals = counterValues(msg);
    if (vals.length === 0) keepAlives++;
    else bSeqs.push(msg.sequenceNumber);
    bValues.push(...vals);
    acks = vals.length ? [{ subscriptionId: resp.subscriptionId, sequenceNumber: msg.sequenceNumber }] : [];
  }
  emit("session_b", {
    subscriptionIds: [...bSubIds],
    values: bValues.length,
    distinct: new Set(bValues).size,
    first: bValues[0],
    last: bValues[bValues.length - 1],
    keepAlives,
    aLastBeforeTransfer: aLastBefore,
    sequenceNumbers: bSeqs,
    aLastDataSequenceNumber: aLastSeq,
  });

  // Session A's publish engine keeps publishing: wait (bounded) for the
  // status change it gets for the subscription it lost.
  try {
    await until("a StatusChangeNotification in session A", () => statusChanges.length > 0, 5000);
  } catch (e) {
    /* reported as none below */
  }
  emit("session_a", {
    statusChanges: statusChanges.map(st),
    valuesBeforeTransfer: aBefore,
    // Data changes that node-opcua handed over after the transfer response
    // (Publish responses of A's connection may be read after B's).
    valuesAfter: aValues.slice(aBefore),
    dataSequenceNumbers: aSeqs.data,
    statusChangeSequenceNumbers: aSeqs.statusChange,
  });
  await b.session.deleteSubscriptions({ subscriptionIds: [sub.subscriptionId] });
  await disconnect(b);
  await disconnect(a).catch(() => {});
}

// 4. Write sim.Command and wait for sim.Status; the same through the
// method sim.WriteCommand; a Call with a wrong argument type.
async function scenarioWrite() {
  const c = await connect();
  const sub = await subscribe(c.session, 5);
  const statusValues = [];
  await monitor(sub, "ns=2;s=sim.Status", { queueSize: 10 }, (d) => statusValues.push(d.value.value));
  await until("the first value of sim.Status", () => statusValues.length > 0, 30000);
  const start = statusValues[statusValues.length - 1];
  const v1 = (start + 4321) % 65536;
  const v2 = (v1 + 1111) % 65536;

  const ws = await c.session.write({
    nodeId: "ns=2;s=sim.Command",
    attributeId: AttributeIds.Value,
    value: { value: { dataType: DataType.UInt16, value: v1 } },
  });
  emit("write", { ...st(ws), value: v1 });
  await until(`sim.Status = ${v1}`, () => statusValues.includes(v1), 10000);
  emit("status", { after: "write", value: v1, seen: true });

  const r = await c.session.call({
    objectId: "ns=2;s=sim",
    methodId: "ns=2;s=sim.WriteCommand",
    inputArguments: [{ dataType: DataType.UInt16, value: v2 }],
  });
  emit("call", {
    ...st(r.statusCode),
    value: v2,
    inputArgumentResults: (r.inputArgumentResults || []).map(st),
    outputArguments: (r.outputArguments || []).map(value),
  });
  await until(`sim.Status = ${v2}`, () => statusValues.includes(v2), 10000);
  emit("status", { after: "call", value: v2, seen: true });

  for (const [name, arg] of [
    ["String", { dataType: DataType.String, value: "7" }],
    ["Double", { dataType: DataType.Double, value: 7 }],
  ]) {
    const bad = await c.session.call({
      objectId: "ns=2;s=sim",
      methodId: "ns=2;s=sim.WriteCommand",
      inputArguments: [arg],
    });
    emit("call_bad", {
      argType: name,
      ...st(bad.statusCode),
      inputArgumentResults: (bad.inputArgumentResults || []).map(st),
    });
  }
  const cmd = await c.session.read({ nodeId: "ns=2;s=sim.Command", attributeId: AttributeIds.Value });
  emit("command", dv(cmd));
  await sub.terminate();
  await disconnect(c);
}

// 5. Server.GetMonitoredItems on the session's own subscription.
async function scenarioGetMonitoredItems() {
  const c = await connect();
  const sub = await subscribe(c.session, 50);
  const items = [];
  for (const tag of ["sim.Counter", "sim.Sine", "sim.Ramp"]) {
    const item = await monitor(sub, `ns=2;s=${tag}`, { samplingInterval: 50, queueSize: 1 });
    items.push({ tag, ...itemInfo(item) });
  }
  emit("items", { subscriptionId: sub.subscriptionId, items });
  const got = await c.session.getMonitoredItems(sub.subscriptionId);
  emit("get_monitored_items", {
    serverHandles: Array.from(got.serverHandles),
    clientHandles: Array.from(got.clientHandles),
  });
  const bad = await c.session.call({
    objectId: "i=2253",
    methodId: "i=11492",
    inputArguments: [{ dataType: DataType.UInt32, value: (sub.subscriptionId + 1000) >>> 0 }],
  });
  emit("get_monitored_items_unknown", { ...st(bad.statusCode), outputArguments: (bad.outputArguments || []).length });
  await sub.terminate();
  await disconnect(c);
}

// 6. An Absolute deadband on sim.Ramp (steps of 0.05 every 5 ms), next to
// an item without filter on the same tag in the same subscription.
async function scenarioDeadband() {
  const deadband = 1.02; // not a multiple of the step: no value sits on the edge
  const c = await connect();
  const sub = await subscribe(c.session, 5);
  const all = [];
  const filtered = [];
  const allItem = await monitor(sub, "ns=2;s=sim.Ramp", { queueSize: 100 }, (d) => all.push(d.value.value));
  const fItem = await monitor(
    sub,
    "ns=2;s=sim.Ramp",
    {
      queueSize: 100,
      filter: new DataChangeFilter({
        trigger: DataChangeTrigger.StatusValue,
        deadbandType: DeadbandType.Absolute,
        deadbandValue: deadband,
      }),
    },
    (d) => filtered.push(d.value.value),
  );
  emit("items", { all: itemInfo(allItem), filtered: itemInfo(fItem), deadband });
  await until("12 filtered values of sim.Ramp", () => filtered.length >= 12, 30000);
  // The unfiltered item's values of the same cycles come in the same
  // Publish response: stop the subscription and take both as they are.
  await sub.terminate();
  emit("deadband", { deadband, filtered, all });

  // A Percent deadband on a tag without EURange is refused.
  // (CreateMonitoredItems by hand: ClientSubscription.monitor hides the
  // item's status code in an error.)
  const cs = await c.session.createSubscription({
    requestedPublishingInterval: 50,
    requestedLifetimeCount: 600,
    requestedMaxKeepAliveCount: 20,
    publishingEnabled: false,
  });
  const cr = await c.session.createMonitoredItems({
    subscriptionId: cs.subscriptionId,
    timestampsToReturn: TimestampsToReturn.Both,
    itemsToCreate: [
      {
        itemToMonitor: { nodeId: "ns=2;s=sim.Ramp", attributeId: AttributeIds.Value },
        monitoringMode: MonitoringMode.Reporting,
        requestedParameters: {
          clientHandle: 1,
          samplingInterval: 50,
          queueSize: 1,
          discardOldest: true,
          filter: new DataChangeFilter({
            trigger: DataChangeTrigger.StatusValue,
            deadbandType: DeadbandType.Percent,
            deadbandValue: 10,
          }),
        },
      },
    ],
  });
  emit("percent", { ...st(cr.responseHeader.serviceResult), results: (cr.results || []).map((r) => st(r.statusCode)) });
  await c.session.deleteSubscriptions({ subscriptionIds: [cs.subscriptionId] });
  await disconnect(c);
}

// 7. Republish: a Publish response the client "dropped" (never
// acknowledged) comes again; once acknowledged it is gone.
async function scenarioRepublish() {
  const c = await connect();
  const cs = await c.session.createSubscription({
    requestedPublishingInterval: 20,
    requestedLifetimeCount: 600,
    requestedMaxKeepAliveCount: 20,
    maxNotificationsPerPublish: 0,
    publishingEnabled: true,
  });
  const id = cs.subscriptionId;
  const cr = await c.session.createMonitoredItems({
    subscriptionId: id,
    timestampsToReturn: TimestampsToReturn.Both,
    itemsToCreate: [
      {
        itemToMonitor: { nodeId: "ns=2;s=sim.Counter", attributeId: AttributeIds.Value },
        monitoringMode: MonitoringMode.Reporting,
        requestedParameters: { clientHandle: 7, samplingInterval: 5, queueSize: 10, discardOldest: true },
      },
    ],
  });
  emit("item", st(cr.results[0].statusCode));
  const msgs = [];
  while (msgs.length < 3) {
    const resp = await publishRaw(c.session, []); // acknowledges nothing
    const vals = counterValues(resp.notificationMessage);
    if (vals.length) {
      msgs.push({
        seq: resp.notificationMessage.sequenceNumber,
        values: vals,
        available: Array.from(resp.availableSequenceNumbers || []),
      });
    }
  }
  emit("published", { messages: msgs });
  const republish = async (seq) => {
    try {
      const r = await new Promise((resolve, reject) =>
        c.session.republish({ subscriptionId: id, retransmitSequenceNumber: seq }, (err, resp) =>
          err ? reject(err) : resolve(resp),
        ),
      );
      const m = r.notificationMessage;
      return { ...st(r.responseHeader.serviceResult), seq: m.sequenceNumber, values: counterValues(m) };
    } catch (err) {
      // node-opcua turns a Bad service result into an error
      const sc = err.response && err.response.responseHeader && err.response.responseHeader.serviceResult;
      if (sc) return st(sc);
      const m = /(Bad\w+)/.exec(String(err.message));
      return { status: m ? m[1] : String(err.message), code: 0 };
    }
  };
  const first = msgs[0].seq;
  emit("republish", { seq: first, result: await republish(first) });
  const ack = await publishRaw(c.session, [{ subscriptionId: id, sequenceNumber: first }]);
  emit("ack", { seq: first, results: (ack.results || []).map(st) });
  emit("republish_acked", { seq: first, result: await republish(first) });
  await c.session.deleteSubscriptions({ subscriptionIds: [id] });
  await disconnect(c);
}

// scenarioSecure connects over every secure endpoint (three policies,
// Sign and SignAndEncrypt) with the client certificate and key of
// EDGED_CERT and EDGED_KEY (PEM files; the certificate names
// EDGED_APP_URI), anonymously, as the user EDGED_USER/EDGED_PASS and,
// with EDGED_USER_CERT and EDGED_USER_KEY, with an X.509 user token; each
// session reads sim.Counter and writes sim.Setpoint. EDGED_PKI is the
// client's own certificate folder (edged's certificate is accepted as it
// comes: the server side is what is tested).
async function scenarioSecure() {
  const { OPCUACertificateManager } = require("node-opcua-certificate-manager");
  const certificateManager = new OPCUACertificateManager({
    rootFolder: process.env.EDGED_PKI,
    automaticallyAcceptUnknownCertificate: true,
  });
  await certificateManager.initialize();
  const tokens = {
    anonymous: undefined,
    username: { type: 1, userName: process.env.EDGED_USER, password: process.env.EDGED_PASS },
  };
  if (process.env.EDGED_USER_CERT) {
    // An X.509 user token: EDGED_USER_CERT (PEM) and EDGED_USER_KEY.
    const fs = require("fs");
    const { readCertificate } = require("node-opcua-crypto");
    tokens.x509 = {
      type: 2,
      certificateData: readCertificate(process.env.EDGED_USER_CERT),
      privateKey: fs.readFileSync(process.env.EDGED_USER_KEY, "utf8"),
    };
  }
  for (const policy of ["Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"]) {
    for (const mode of ["Sign", "SignAndEncrypt"]) {
      for (const [token, identity] of Object.entries(tokens)) {
        const client = OPCUAClient.create({
          applicationName: "edged-interop-node-opcua",
          applicationUri: process.env.EDGED_APP_URI,
          endpointMustExist: false,
          securityMode: MessageSecurityMode[mode],
          securityPolicy: SecurityPolicy[policy],
          certificateFile: process.env.EDGED_CERT,
          privateKeyFile: process.env.EDGED_KEY,
          clientCertificateManager: certificateManager,
          connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
          requestedSessionTimeout: 60000,
          keepSessionAlive: false,
        });
        const res = { policy, mode, token };
        try {
          await client.connect(endpointUrl);
          const session = await client.createSession(identity);
          const r = await session.read({ nodeId: "ns=2;s=sim.Counter", attributeId: AttributeIds.Value });
          res.read = st(r.statusCode);
          const w = await session.write({
            nodeId: "ns=2;s=sim.Setpoint",
            attributeId: AttributeIds.Value,
            value: { value: { dataType: DataType.Float, value: 12.5 } },
          });
          res.write = st(w);
          await session.close(true);
        } catch (err) {
          res.error = String((err && err.message) || err);
        } finally {
          await client.disconnect();
        }
        emit("result", res);
      }
    }
  }
}

// scenarioConfiguration is an administrator changing the configuration:
// as the user EDGED_USER (ConfigureAdmin) over Basic256Sha256
// SignAndEncrypt with EDGED_CERT and EDGED_KEY, it downloads
// ConfigurationFile (namespace EDGED_CONFIG_NS) with node-opcua's file
// transfer client, adds a tag to device sim, uploads it (closing the file
// applies it), then applies a second edit with Apply and a confirmation
// deadline, and confirms it.
async function scenarioConfiguration() {
  const { OPCUACertificateManager } = require("node-opcua-certificate-manager");
  const { ClientFile, OpenFileMode } = require("node-opcua-file-transfer");
  const certificateManager = new OPCUACertificateManager({
    rootFolder: process.env.EDGED_PKI,
    automaticallyAcceptUnknownCertificate: true,
  });
  await certificateManager.initialize();
  const ns = process.env.EDGED_CONFIG_NS;
  const client = OPCUAClient.create({
    applicationName: "edged-interop-node-opcua",
    applicationUri: process.env.EDGED_APP_URI,
    endpointMustExist: false,
    securityMode: MessageSecurityMode.SignAndEncrypt,
    securityPolicy: SecurityPolicy.Basic256Sha256,
    certificateFile: process.env.EDGED_CERT,
    privateKeyFile: process.env.EDGED_KEY,
    clientCertificateManager: certificateManager,
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    keepSessionAlive: false,
  });
  await client.connect(endpointUrl);
  try {
    const session = await client.createSession({ type: 1, userName: process.env.EDGED_USER, password: process.env.EDGED_PASS });
    const version = async () => (await session.read({ nodeId: `ns=${ns};s=Configuration.CurrentVersion`, attributeId: AttributeIds.Value })).value.value;
    const res = { versionStart: await version() };
    const file = new ClientFile(session, `ns=${ns};s=ConfigurationFile`);
    await file.open(OpenFileMode.Read);
    const size = await file.size();
    let data = Buffer.alloc(0);
    for (;;) {
      const b = await file.read(700);
      if (!b || b.length === 0) break;
      data = Buffer.concat([data, b]);
    }
    await file.close();
    res.size = Number(Array.isArray(size) ? size[1] : size);
    res.downloaded = data.length;
    const doc = JSON.parse(data.toString("utf8"));
    const sim = doc.devices.find((d) => d.name === "sim");
    sim.tags.push({ name: "NodeAdded", type: "uint16", address: "hr:40", scan_class: "fast", access: "read" });
    const up = Buffer.from(JSON.stringify(doc, null, 2));
    await file.open(OpenFileMode.WriteEraseExisting);
    for (let i = 0; i < up.length; i += 600) await file.write(up.subarray(i, i + 600));
    try {
      await file.close();
      res.uploadClose = "Good";
    } catch (err) {
      res.uploadClose = String(err.message || err);
    }
    res.versionAfterUpload = await version();
    // The new tag is polled within a few cycles of the change: read it
    // until it is Good (or the hang guard of 5 s ends the wait).
    const t0 = Date.now();
    let added;
    for (;;) {
      added = await session.read({ nodeId: "ns=2;s=sim.NodeAdded", attributeId: AttributeIds.Value });
      if (added.statusCode.isGood() || Date.now() - t0 > 5000) break;
      await sleep(5);
    }
    res.addedRead = st(added.statusCode);
    res.addedGoodAfterMs = Date.now() - t0;

    sim.tags = sim.tags.filter((t) => t.name !== "NodeAdded");
    const call = async (name, inputArguments) => {
      const r = await session.call({ objectId: `ns=${ns};s=Configuration`, methodId: `ns=${ns};s=Configuration.${name}`, inputArguments });
      return { ...st(r.statusCode), out: (r.outputArguments || []).map(value) };
    };
    res.apply = await call("Apply", [
      { dataType: DataType.ByteString, value: Buffer.from(JSON.stringify(doc)) },
      { dataType: DataType.UInt32, value: res.versionAfterUpload },
      { dataType: DataType.UInt32, value: 60000 },
      { dataType: DataType.String, value: "node-opcua: NodeAdded out again" },
    ]);
    const applied = res.apply.out[0];
    res.confirm = await call("Confirm", [{ dataType: DataType.UInt32, value: applied }]);
    res.versionEnd = await version();
    const gone = await session.read({ nodeId: "ns=2;s=sim.NodeAdded", attributeId: AttributeIds.Value });
    res.removedRead = st(gone.statusCode);
    emit("result", res);
    await session.close(true);
  } finally {
    await client.disconnect();
  }
}

// scenarioOwnCert connects over Basic256Sha256 SignAndEncrypt, anonymously,
// with the certificate node-opcua makes for itself at its first start
// (EDGED_PKI/own/certs/client_certificate.pem, PEM) and reads sim.Counter;
// it reports the certificate file and what happened, so that the test can
// trust the file with `edged pki trust` between two runs.
async function scenarioOwnCert() {
  const path = require("path");
  const { OPCUACertificateManager } = require("node-opcua-certificate-manager");
  const certificateManager = new OPCUACertificateManager({
    rootFolder: process.env.EDGED_PKI,
    automaticallyAcceptUnknownCertificate: true,
  });
  await certificateManager.initialize();
  const client = OPCUAClient.create({
    applicationName: "edged-interop-node-opcua-owncert",
    endpointMustExist: false,
    securityMode: MessageSecurityMode.SignAndEncrypt,
    securityPolicy: SecurityPolicy.Basic256Sha256,
    clientCertificateManager: certificateManager,
    connectionStrategy: { maxRetry: 0, initialDelay: 100, maxDelay: 200 },
    keepSessionAlive: false,
  });
  const res = { certificateFile: path.join(certificateManager.rootDir, "own/certs/client_certificate.pem") };
  try {
    await client.connect(endpointUrl);
    const session = await client.createSession();
    const r = await session.read({ nodeId: "ns=2;s=sim.Counter", attributeId: AttributeIds.Value });
    res.read = st(r.statusCode);
    await session.close(true);
  } catch (err) {
    res.error = String((err && err.message) || err);
  } finally {
    await client.disconnect();
  }
  emit("result", res);
}

// scenarioHistory reads the history of sim.Counter with node-opcua's
// readHistoryValue (raw, 500 values a call, following the continuation
// points) and readAggregateValue (Average, Count and Maximum of 1 s
// intervals), and a node without history.
async function scenarioHistory() {
  const { client, session } = await connect();
  try {
    await sleep(2500);
    const end = new Date();
    const start = new Date(end.getTime() - 60000);
    const nodeId = "ns=2;s=sim.Counter";
    let values = [];
    let calls = 0;
    let cp = null;
    let status = null;
    do {
      const r = await session.readHistoryValue({ nodeId, continuationPoint: cp }, start, end, { numValuesPerNode: 500, returnBounds: false });
      calls++;
      status = st(r.statusCode);
      cp = r.continuationPoint && r.continuationPoint.length ? r.continuationPoint : null;
      for (const d of (r.historyData && r.historyData.dataValues) || []) values.push(dv(d));
    } while (cp && calls < 100);
    emit("raw", { ...status, calls, count: values.length, first: values[0], last: values[values.length - 1],
      values: values.map((v) => v.value), times: values.map((v) => v.sourceTimestamp), statuses: values.map((v) => v.status) });
    const aggStart = new Date(Math.floor(start.getTime() / 1000) * 1000);
    const aggEnd = new Date(Math.floor(end.getTime() / 1000) * 1000);
    for (const [name, fn] of [["Average", AggregateFunction.Average], ["Count", AggregateFunction.Count], ["Maximum", AggregateFunction.Maximum]]) {
      const r = await session.readAggregateValue({ nodeId }, aggStart, aggEnd, fn, 1000);
      emit("aggregate", { name, ...st(r.statusCode), values: ((r.historyData && r.historyData.dataValues) || []).map(dv) });
    }
    const none = await session.readHistoryValue({ nodeId: "ns=2;s=sim.Command" }, start, end);
    emit("unhistorized", st(none.statusCode));
  } finally {
    await disconnect({ client, session });
  }
}

// scenarioAlarms is node-opcua's client alarm list (installAlarmMonitoring:
// a subscription to the Server object's events with the fields of
// AlarmConditionType, browsed from the server, and a ConditionRefresh):
// it waits for sim.Sine's alarm to become active and end, acknowledges it,
// calls ConditionRefresh again and counts the alarm's updates it brings,
// and confirms it.
async function scenarioAlarms() {
  const { client, session } = await connect();
  try {
    const list = await installAlarmMonitoring(session);
    const cond = "ns=2;s=sim.Sine/Limit";
    const find = () => list.alarms().find((a) => a.conditionId.toString() === cond);
    const field = (a, path) => path.split(".").reduce((o, k) => (o ? o[k] : undefined), a.fields);
    const state = (a) => ({
      active: field(a, "activeState.id.value"), acked: field(a, "ackedState.id.value"), retain: field(a, "retain.value"),
      severity: field(a, "severity.value"), source: field(a, "sourceName.value"), eventType: a.eventType.toString(),
    });
    let updates = 0;
    list.on("alarmChanged", (a) => { if (a.conditionId.toString() === cond) updates++; });
    await until("sim.Sine's alarm active", () => { const a = find(); return a && field(a, "activeState.id.value") === true; }, 30000);
    emit("active", state(find()));
    await until("sim.Sine's alarm ended", () => field(find(), "activeState.id.value") === false, 30000);
    emit("inactive", state(find()));
    emit("ack", st(await find().acknowledge(session, "seen by node-opcua")));
    await until("the acknowledgement's event", () => field(find(), "ackedState.id.value") === true, 10000);
    emit("acked", state(find()));
    const before = updates;
    const sub = session.$subscriptionForAlarmList;
    await callConditionRefresh(session, sub.subscriptionId);
    await until("the refresh's update of the alarm", () => updates > before, 10000);
    emit("refresh", { updates: updates - before, alarms: list.alarms().length });
    emit("confirm", st(await find().confirm(session, "done")));
    await uninstallAlarmMonitoring(session);
  } finally {
    await disconnect({ client, session });
  }
}

const scenarios = {
  owncert: scenarioOwnCert,
  secure: scenarioSecure,
  configuration: scenarioConfiguration,
  connect: scenarioConnect,
  subscribe: scenarioSubscribe,
  transfer: scenarioTransfer,
  write: scenarioWrite,
  getmonitoreditems: scenarioGetMonitoredItems,
  deadband: scenarioDeadband,
  republish: scenarioRepublish,
  history: scenarioHistory,
  alarms: scenarioAlarms,
};

async function main() {
  const names = (scenario || "").split(",").filter((n) => n);
  if (!endpointUrl || names.length === 0 || names.some((n) => !scenarios[n])) {
    throw new Error(`usage: client.js ENDPOINT_URL SCENARIO[,SCENARIO...] (${Object.keys(scenarios).join(", ")})`);
  }
  let failed = 0;
  for (const name of names) {
    current = name;
    const t0 = Date.now();
    try {
      await scenarios[name]();
      emit("done", { ms: Date.now() - t0 });
    } catch (err) {
      failed++;
      emit("error", { message: String((err && err.stack) || err) });
    }
  }
  return failed;
}

main().then(
  (failed) => process.exit(failed ? 1 : 0),
  (err) => {
    current = "";
    emit("error", { message: String((err && err.stack) || err) });
    process.exit(2);
  },
);
