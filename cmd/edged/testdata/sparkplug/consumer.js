// The independent Sparkplug B consumer of cmd/edged/sparkplug_test.go: it
// subscribes to spBv1.0/# on each broker given, decodes every message with
// Eclipse Tahu's sparkplug-payload (its protobuf schema, and its
// decodePayload to cross-check the values), checks the specification's
// rules per edge node and prints what it saw as JSON lines on stdout:
//
//   {"ev":"ready"}                         subscribed on every broker
//   {"ev":"msg","broker":i,"type":"DDATA","group":..,"node":..,"device":..,"seq":n,
//    "bdSeq":n,"metrics":[{"name":..,"alias":..,"type":..,"value":..,"ts":..,"hist":b,"null":b,"quality":q}]}
//   {"ev":"violation","msg":".."}          a rule broken
//
// Commands on stdin, one JSON object a line:
//   {"cmd":"publish","broker":i,"topic":..,"payload":{Tahu payload object}}
//   {"cmd":"state","online":true|false}    the primary host's STATE (--host)
//   {"cmd":"rebirth","group":..,"node":..} an NCMD Node Control/Rebirth
//
// Usage: node consumer.js --host NAME URL...
"use strict";
const mqtt = require("mqtt");
const tahu = require("sparkplug-payload").get("spBv1.0");
const Long = require("long");
const proto = require("sparkplug-payload/lib/sparkplugPayloadProto");
const Payload = proto.org.eclipse.tahu.protobuf.Payload;
const readline = require("readline");

const args = process.argv.slice(2);
let host = "";
const urls = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--host") host = args[++i];
  else urls.push(args[i]);
}

function out(o) { process.stdout.write(JSON.stringify(o) + "\n"); }
function violation(msg) { out({ ev: "violation", msg }); }

const typeNames = { 1: "Int8", 2: "Int16", 3: "Int32", 4: "Int64", 5: "UInt8", 6: "UInt16", 7: "UInt32", 8: "UInt64",
  9: "Float", 10: "Double", 11: "Boolean", 12: "String", 13: "DateTime", 14: "Text" };

function num(x) {
  if (x === undefined || x === null) return undefined;
  if (Long.isLong(x)) return Number(x.toString());
  return x;
}

// valueOf reads a metric's value from the raw protobuf as the
// specification's datatype table says.
function valueOf(m, type) {
  if (m.isNull) return null;
  const has = (f) => Object.prototype.hasOwnProperty.call(m, f);
  switch (type) {
    case 1: case 2: case 3:
      if (!has("intValue")) return undefined;
      return m.intValue | 0;
    case 5: case 6: case 7:
      if (!has("intValue")) return undefined;
      return m.intValue >>> 0;
    case 4:
      if (!has("longValue")) return undefined;
      return Number(Long.fromValue(m.longValue).toSigned().toString());
    case 8: case 13:
      if (!has("longValue")) return undefined;
      return Number(Long.fromValue(m.longValue).toUnsigned().toString());
    case 9: return has("floatValue") ? m.floatValue : undefined;
    case 10: return has("doubleValue") ? m.doubleValue : undefined;
    case 11: return has("booleanValue") ? m.booleanValue : undefined;
    case 12: case 14: return has("stringValue") ? m.stringValue : undefined;
  }
  return undefined;
}

// The state of each edge node, by group/node.
const nodes = new Map();
function nodeOf(group, node) {
  const k = group + "/" + node;
  if (!nodes.has(k)) nodes.set(k, { born: false, bdSeq: -1, seq: -1, aliases: new Map(), devices: new Map() });
  return nodes.get(k);
}

function check(broker, topic, buf) {
  const p = topic.split("/");
  if (p[0] !== "spBv1.0") return;
  if (p[1] === "STATE") return;
  const [, group, type, node, device] = p;
  let raw, dec;
  try {
    raw = Payload.decode(buf);
    dec = tahu.decodePayload(buf);
  } catch (e) {
    violation(`${topic}: Tahu cannot decode the payload: ${e.message}`);
    return;
  }
  const n = nodeOf(group, node);
  const seq = Object.prototype.hasOwnProperty.call(raw, "seq") ? num(raw.seq) : undefined;
  const ts = Object.prototype.hasOwnProperty.call(raw, "timestamp") ? num(raw.timestamp) : undefined;
  const isCmd = type === "NCMD" || type === "DCMD";
  if (isCmd) return; // ours
  if (type !== "NDEATH" && ts === undefined) violation(`${topic}: no payload timestamp`);
  const metrics = [];
  for (let i = 0; i < raw.metrics.length; i++) {
    const m = raw.metrics[i];
    const hasName = Object.prototype.hasOwnProperty.call(m, "name");
    const hasAlias = Object.prototype.hasOwnProperty.call(m, "alias");
    let def;
    if (hasAlias) def = n.aliases.get(num(m.alias));
    let dt = Object.prototype.hasOwnProperty.call(m, "datatype") ? m.datatype : (def ? def.type : 0);
    const value = valueOf(m, dt);
    const q = qualityOf(m);
    const mt = { name: hasName ? m.name : (def ? def.name : undefined), alias: hasAlias ? num(m.alias) : undefined,
      type: typeNames[dt], value, ts: Object.prototype.hasOwnProperty.call(m, "timestamp") ? num(m.timestamp) : undefined,
      hist: !!m.isHistorical, null: !!m.isNull, quality: q };
    if (!m.isNull && value === undefined) violation(`${topic}: metric ${mt.name}/${mt.alias}: no value of type ${typeNames[dt]}`);
    // Tahu's own decoding agrees, but for UInt32, which Tahu's JavaScript
    // reads from long_value where the specification puts int_value.
    // (A DATA metric may leave its datatype to the birth, which Tahu's
    // stateless decodePayload does not know.)
    const tv = dec.metrics[i].value;
    const typed = Object.prototype.hasOwnProperty.call(m, "datatype");
    if (typed && dt !== 7 && !m.isNull && value !== undefined && num(tv) !== value && !(Number.isNaN(num(tv)) && Number.isNaN(value))) {
      violation(`${topic}: metric ${mt.name}: Tahu's decodePayload says ${tv}, the schema's fields ${value}`);
    }
    if (type !== "NDEATH" && mt.ts === undefined) violation(`${topic}: metric ${mt.name}/${mt.alias} without a timestamp`);
    metrics.push({ m, mt, hasName, hasAlias, dt });
  }
  const seqOK = () => {
    if (seq === undefined) { violation(`${topic}: no seq`); return; }
    if (n.seq >= 0 && seq !== (n.seq + 1) % 256) violation(`${topic}: seq ${seq} after ${n.seq}`);
    n.seq = seq;
  };
  switch (type) {
    case "NBIRTH": {
      if (seq !== 0) violation(`${topic}: NBIRTH seq ${seq}, not 0`);
      n.seq = 0;
      n.born = true;
      n.aliases = new Map();
      n.devices = new Map();
      let bd = metrics.find((x) => x.mt.name === "bdSeq");
      if (!bd) violation(`${topic}: NBIRTH without bdSeq`);
      else n.bdSeq = bd.mt.value;
      const rb = metrics.find((x) => x.mt.name === "Node Control/Rebirth");
      if (!rb || rb.mt.value !== false || rb.dt !== 11) violation(`${topic}: NBIRTH without Node Control/Rebirth false`);
      births(topic, n, metrics, "");
      break;
    }
    case "DBIRTH":
      if (!n.born) violation(`${topic}: DBIRTH before NBIRTH`);
      seqOK();
      for (const [a, d] of n.aliases) if (d.device === device) n.aliases.delete(a);
      births(topic, n, metrics, device);
      n.devices.set(device, true);
      break;
    case "DDATA": case "NDATA":
      if (!n.born) violation(`${topic}: ${type} before NBIRTH`);
      seqOK();
      if (type === "DDATA" && n.devices.get(device) !== true) violation(`${topic}: DDATA of a device not born or dead`);
      for (const x of metrics) {
        if (x.hasName) violation(`${topic}: a metric with a name (${x.mt.name}) in a DATA message`);
        if (!x.hasAlias) { violation(`${topic}: a metric without an alias`); continue; }
        const d = n.aliases.get(x.mt.alias);
        if (!d) violation(`${topic}: alias ${x.mt.alias} not in a birth`);
        else if (d.device !== (device || "")) violation(`${topic}: alias ${x.mt.alias} is ${d.device}'s`);
        else if (Object.prototype.hasOwnProperty.call(x.m, "datatype") && x.dt !== d.type) violation(`${topic}: alias ${x.mt.alias} datatype ${x.dt}, born ${d.type}`);
      }
      break;
    case "DDEATH":
      seqOK();
      if (n.devices.get(device) !== true) violation(`${topic}: DDEATH of a device not alive`);
      n.devices.set(device, false);
      break;
    case "NDEATH": {
      if (seq !== undefined) violation(`${topic}: NDEATH with a seq`);
      const bd = metrics.find((x) => x.mt.name === "bdSeq");
      if (!bd) violation(`${topic}: NDEATH without bdSeq`);
      else if (n.born && bd.mt.value !== n.bdSeq) violation(`${topic}: NDEATH bdSeq ${bd.mt.value}, NBIRTH's ${n.bdSeq}`);
      n.born = false;
      n.seq = -1;
      break;
    }
    default:
      violation(`${topic}: unknown message type`);
  }
  out({ ev: "msg", broker, type, group, node, device: device || "", seq, bdSeq: n.bdSeq, metrics: metrics.map((x) => x.mt) });
}

function qualityOf(m) {
  if (!m.properties) return undefined;
  const i = m.properties.keys.indexOf("Quality");
  if (i < 0) return undefined;
  const v = m.properties.values[i];
  if (v.type !== 3) violation(`the Quality property of type ${v.type}, not 3 (Int32)`);
  return v.intValue | 0;
}

function births(topic, n, metrics, device) {
  for (const x of metrics) {
    if (!x.hasName || !x.hasAlias) violation(`${topic}: a birth metric without a name and an alias`);
    if (!Object.prototype.hasOwnProperty.call(x.m, "datatype")) violation(`${topic}: birth metric ${x.mt.name} without a datatype`);
    if (n.aliases.has(x.mt.alias)) violation(`${topic}: alias ${x.mt.alias} used twice in the node`);
    n.aliases.set(x.mt.alias, { device, name: x.mt.name, type: x.dt });
    const q = x.mt.quality;
    if (q !== undefined && q !== 0 && q !== 192 && q !== 500) violation(`${topic}: Quality ${q}`);
  }
}

const stateTopic = "spBv1.0/STATE/" + host;
function statePayload(online) { return JSON.stringify({ online, timestamp: Date.now() }); }

const clients = urls.map((url, i) => {
  const opts = { reconnectPeriod: 200, connectTimeout: 5000, clean: true, protocolVersion: 4 };
  if (host) opts.will = { topic: stateTopic, payload: statePayload(false), qos: 1, retain: true };
  const c = mqtt.connect(url, opts);
  c.subscribedOnce = false;
  c.on("connect", () => {
    c.subscribe("spBv1.0/#", { qos: 0 }, (err) => {
      if (err) { violation(`subscribe on ${url}: ${err.message}`); return; }
      out({ ev: "connected", broker: i });
      if (host) c.publish(stateTopic, statePayload(true), { qos: 1, retain: true });
      if (!c.subscribedOnce) {
        c.subscribedOnce = true;
        if (clients.every((x) => x.subscribedOnce)) out({ ev: "ready" });
      }
    });
  });
  c.on("close", () => out({ ev: "closed", broker: i }));
  c.on("error", () => {});
  c.on("message", (topic, buf) => check(i, topic, buf));
  return c;
});

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let cmd;
  try { cmd = JSON.parse(line); } catch (e) { violation("bad command: " + line); return; }
  const b = cmd.broker || 0;
  switch (cmd.cmd) {
    case "publish":
      clients[b].publish(cmd.topic, Buffer.from(tahu.encodePayload(cmd.payload)), { qos: 0 });
      break;
    case "raw":
      clients[b].publish(cmd.topic, Buffer.from(cmd.hex, "hex"), { qos: 0 });
      break;
    case "state":
      for (const c of clients) c.publish(stateTopic, statePayload(cmd.online), { qos: 1, retain: true });
      break;
    case "rebirth":
      clients[b].publish(`spBv1.0/${cmd.group}/NCMD/${cmd.node}`, Buffer.from(tahu.encodePayload({
        timestamp: Date.now(), metrics: [{ name: "Node Control/Rebirth", type: "Boolean", value: true }] })), { qos: 0 });
      break;
    case "exit":
      let left = clients.length;
      for (const c of clients) c.end(false, () => { if (--left === 0) process.exit(0); });
      break;
  }
});
