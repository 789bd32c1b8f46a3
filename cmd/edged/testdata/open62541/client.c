/* The open62541 v1.5.7 client against edged, for cmd/edged's
 * open62541_test.go. It runs the scenarios named on the command line
 * against the endpoint and prints what it sees as JSON lines; the
 * assertions are in the Go test.
 *
 *   client <endpoint> crawl|writeread|subscribe ...
 *
 * crawl      browses everything under Objects and reads each Variable's
 *            Value (with both timestamps) and DataType: one "var" line each
 * writeread  writes sim.Setpoint (Float) and io.DO3 (Boolean) 60 times each,
 *            reading every value back right after the Good response
 * subscribe  monitors sim.Counter at 5 ms for 2 s, counting the values
 * secure     (alone) connects over the six secure endpoints, anonymously
 *            and with EDGED_USER/EDGED_PASS, with the certificate and key
 *            of EDGED_CERT and EDGED_KEY (DER files, the certificate naming
 *            EDGED_APP_URI), trusting the server certificate of
 *            EDGED_SERVER_CERT only; each session reads sim.Counter and
 *            writes sim.Setpoint: one "result" line each
 * probe      (alone) connects once, Basic256Sha256 SignAndEncrypt and
 *            anonymous, with the same files, and prints the status code
 *            of the connect: one "connect" line
 * alarm      subscribes to the Server object's events with a where clause
 *            (OfType AlarmConditionType, Severity >= 100), sees sim.Sine's
 *            alarm become active and end, and acknowledges it by Call:
 *            "event", "ack" and "acked" lines
 * history    reads the history of sim.Counter of the last minute with
 *            UA_Client_HistoryRead_raw (200 values a call, the client
 *            following the continuation points): one "raw" line with the
 *            values; then the Average, Count and Maximum of its 1 s
 *            intervals with a ReadProcessedDetails through the generic
 *            UA_Client_Service_historyRead: one "processed" line each
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "open62541.h"

static void jstr(const UA_String *s) {
    putchar('"');
    for (size_t i = 0; i < s->length; i++) {
        unsigned char c = s->data[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void jnode(const UA_NodeId *id) {
    UA_String s = UA_STRING_NULL;
    UA_NodeId_print(id, &s);
    jstr(&s);
    UA_String_clear(&s);
}

static void fail(const char *what, UA_StatusCode st) {
    printf("{\"ev\":\"error\",\"message\":\"%s: %s\"}\n", what, UA_StatusCode_name(st));
}

/* --- crawl --- */

typedef struct {
    UA_NodeId *ids;
    size_t n, cap;
} nodeList;

static int contains(const nodeList *l, const UA_NodeId *id) {
    for (size_t i = 0; i < l->n; i++)
        if (UA_NodeId_equal(&l->ids[i], id))
            return 1;
    return 0;
}

static void add(nodeList *l, const UA_NodeId *id) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->ids = realloc(l->ids, l->cap * sizeof(UA_NodeId));
    }
    UA_NodeId_copy(id, &l->ids[l->n++]);
}

static void references(UA_Client *c, const UA_ReferenceDescription *refs, size_t n,
                       nodeList *seen, nodeList *queue, nodeList *vars) {
    for (size_t i = 0; i < n; i++) {
        const UA_ReferenceDescription *r = &refs[i];
        if (r->nodeId.serverIndex != 0 || contains(seen, &r->nodeId.nodeId))
            continue;
        add(seen, &r->nodeId.nodeId);
        add(queue, &r->nodeId.nodeId);
        if (r->nodeClass == UA_NODECLASS_VARIABLE)
            add(vars, &r->nodeId.nodeId);
    }
}

static int crawl(UA_Client *c) {
    nodeList seen = {0}, queue = {0}, vars = {0};
    UA_NodeId objects = UA_NODEID_NUMERIC(0, UA_NS0ID_OBJECTSFOLDER);
    add(&queue, &objects);
    for (size_t q = 0; q < queue.n; q++) {
        UA_BrowseRequest req;
        UA_BrowseRequest_init(&req);
        UA_BrowseDescription bd;
        UA_BrowseDescription_init(&bd);
        bd.nodeId = queue.ids[q];
        bd.browseDirection = UA_BROWSEDIRECTION_FORWARD;
        bd.referenceTypeId = UA_NODEID_NUMERIC(0, UA_NS0ID_HIERARCHICALREFERENCES);
        bd.includeSubtypes = true;
        bd.resultMask = UA_BROWSERESULTMASK_ALL;
        req.nodesToBrowse = &bd;
        req.nodesToBrowseSize = 1;
        UA_BrowseResponse resp = UA_Client_Service_browse(c, req);
        if (resp.responseHeader.serviceResult != UA_STATUSCODE_GOOD || resp.resultsSize != 1) {
            fail("Browse", resp.responseHeader.serviceResult);
            UA_BrowseResponse_clear(&resp);
            return 1;
        }
        references(c, resp.results[0].references, resp.results[0].referencesSize, &seen, &queue, &vars);
        UA_ByteString cp = UA_BYTESTRING_NULL;
        UA_ByteString_copy(&resp.results[0].continuationPoint, &cp);
        UA_BrowseResponse_clear(&resp);
        while (cp.length > 0) {
            UA_BrowseNextRequest next;
            UA_BrowseNextRequest_init(&next);
            next.continuationPoints = &cp;
            next.continuationPointsSize = 1;
            UA_BrowseNextResponse nr = UA_Client_Service_browseNext(c, next);
            UA_ByteString_clear(&cp);
            if (nr.responseHeader.serviceResult != UA_STATUSCODE_GOOD || nr.resultsSize != 1) {
                fail("BrowseNext", nr.responseHeader.serviceResult);
                UA_BrowseNextResponse_clear(&nr);
                return 1;
            }
            references(c, nr.results[0].references, nr.results[0].referencesSize, &seen, &queue, &vars);
            UA_ByteString_copy(&nr.results[0].continuationPoint, &cp);
            UA_BrowseNextResponse_clear(&nr);
        }
    }
    for (size_t i = 0; i < vars.n; i++) {
        UA_ReadValueId rv[2];
        UA_ReadValueId_init(&rv[0]);
        UA_ReadValueId_init(&rv[1]);
        rv[0].nodeId = vars.ids[i];
        rv[0].attributeId = UA_ATTRIBUTEID_VALUE;
        rv[1].nodeId = vars.ids[i];
        rv[1].attributeId = UA_ATTRIBUTEID_DATATYPE;
        UA_ReadRequest req;
        UA_ReadRequest_init(&req);
        req.nodesToRead = rv;
        req.nodesToReadSize = 2;
        req.timestampsToReturn = UA_TIMESTAMPSTORETURN_BOTH;
        UA_ReadResponse resp = UA_Client_Service_read(c, req);
        if (resp.responseHeader.serviceResult != UA_STATUSCODE_GOOD || resp.resultsSize != 2) {
            fail("Read", resp.responseHeader.serviceResult);
            UA_ReadResponse_clear(&resp);
            return 1;
        }
        const UA_DataValue *v = &resp.results[0], *dt = &resp.results[1];
        printf("{\"ev\":\"var\",\"node\":");
        jnode(&vars.ids[i]);
        printf(",\"status\":%u", v->hasStatus ? v->status : UA_STATUSCODE_GOOD);
        if (v->hasValue && v->value.type != NULL) {
            printf(",\"type\":");
            jnode(&v->value.type->typeId);
            printf(",\"array\":%s", UA_Variant_isScalar(&v->value) ? "false" : "true");
        }
        printf(",\"src\":%s,\"srv\":%s", v->hasSourceTimestamp ? "true" : "false",
               v->hasServerTimestamp ? "true" : "false");
        if (dt->hasValue && UA_Variant_hasScalarType(&dt->value, &UA_TYPES[UA_TYPES_NODEID])) {
            printf(",\"datatype\":");
            jnode((const UA_NodeId *)dt->value.data);
        }
        printf("}\n");
        UA_ReadResponse_clear(&resp);
    }
    printf("{\"ev\":\"crawl\",\"nodes\":%zu,\"vars\":%zu}\n", seen.n, vars.n);
    return 0;
}

/* --- writeread --- */

static int writeread(UA_Client *c) {
    const char *nodes[] = {"sim.Setpoint", "io.DO3"};
    for (int k = 0; k < 2; k++) {
        UA_NodeId id = UA_NODEID_STRING(2, (char *)nodes[k]);
        int bad = 0, stale = 0;
        for (int i = 0; i < 60; i++) {
            UA_Variant v;
            UA_Float f = (UA_Float)i + 0.25f;
            UA_Boolean b = i % 2 == 0;
            if (k == 0)
                UA_Variant_setScalar(&v, &f, &UA_TYPES[UA_TYPES_FLOAT]);
            else
                UA_Variant_setScalar(&v, &b, &UA_TYPES[UA_TYPES_BOOLEAN]);
            UA_StatusCode st = UA_Client_writeValueAttribute(c, id, &v);
            if (st != UA_STATUSCODE_GOOD) {
                if (bad++ == 0)
                    fail("Write", st);
                continue;
            }
            UA_Variant got;
            UA_Variant_init(&got);
            st = UA_Client_readValueAttribute(c, id, &got);
            if (st != UA_STATUSCODE_GOOD || got.type != v.type ||
                (k == 0 ? *(UA_Float *)got.data != f : *(UA_Boolean *)got.data != b))
                stale++;
            UA_Variant_clear(&got);
        }
        printf("{\"ev\":\"writeread\",\"node\":\"%s\",\"writes\":60,\"bad\":%d,\"stale\":%d}\n", nodes[k], bad, stale);
    }
    return 0;
}

/* --- subscribe --- */

#define MAXSEEN 4096
static UA_UInt32 seenValues[MAXSEEN];
static size_t nSeen;

static void onChange(UA_Client *c, UA_UInt32 subId, void *subCtx, UA_UInt32 monId,
                     void *monCtx, UA_DataValue *v) {
    if (!v->hasValue || !UA_Variant_hasScalarType(&v->value, &UA_TYPES[UA_TYPES_UINT32]))
        return;
    UA_UInt32 x = *(UA_UInt32 *)v->value.data;
    for (size_t i = 0; i < nSeen; i++)
        if (seenValues[i] == x)
            return;
    if (nSeen < MAXSEEN)
        seenValues[nSeen++] = x;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int subscribe(UA_Client *c) {
    UA_CreateSubscriptionRequest sr = UA_CreateSubscriptionRequest_default();
    sr.requestedPublishingInterval = 5;
    UA_CreateSubscriptionResponse sresp = UA_Client_Subscriptions_create(c, sr, NULL, NULL, NULL);
    if (sresp.responseHeader.serviceResult != UA_STATUSCODE_GOOD) {
        fail("CreateSubscription", sresp.responseHeader.serviceResult);
        return 1;
    }
    UA_MonitoredItemCreateRequest mr =
        UA_MonitoredItemCreateRequest_default(UA_NODEID_STRING(2, "sim.Counter"));
    mr.requestedParameters.samplingInterval = 5;
    mr.requestedParameters.queueSize = 10;
    UA_MonitoredItemCreateResult mres = UA_Client_MonitoredItems_createDataChange(
        c, sresp.subscriptionId, UA_TIMESTAMPSTORETURN_BOTH, mr, NULL, onChange, NULL);
    if (mres.statusCode != UA_STATUSCODE_GOOD) {
        fail("CreateMonitoredItems", mres.statusCode);
        return 1;
    }
    /* Count from the first value on, for 2 s; give up after 30 s without. */
    double start = now(), first = 0;
    while (now() - start < 30) {
        UA_StatusCode st = UA_Client_run_iterate(c, 1);
        if (st != UA_STATUSCODE_GOOD) {
            fail("run_iterate", st);
            return 1;
        }
        if (first == 0 && nSeen > 0) {
            first = now();
            nSeen = 0;
        }
        if (first != 0 && now() - first >= 2)
            break;
    }
    printf("{\"ev\":\"subscribe\",\"values\":%zu,\"publishing\":%g,\"sampling\":%g}\n", nSeen,
           sresp.revisedPublishingInterval, mres.revisedSamplingInterval);
    return 0;
}

/* --- history --- */

#define MAXHIST 100000
static UA_UInt32 histValues[MAXHIST];
static UA_DateTime histTimes[MAXHIST];
static size_t nHist, histCalls, histBad;

static UA_Boolean onHistory(UA_Client *c, const UA_NodeId *id, UA_Boolean more,
                            const UA_ExtensionObject *data, void *ctx) {
    histCalls++;
    if (data->encoding != UA_EXTENSIONOBJECT_DECODED || data->content.decoded.type != &UA_TYPES[UA_TYPES_HISTORYDATA])
        return false;
    UA_HistoryData *hd = (UA_HistoryData *)data->content.decoded.data;
    for (size_t i = 0; i < hd->dataValuesSize; i++) {
        UA_DataValue *dv = &hd->dataValues[i];
        if (!dv->hasValue || !UA_Variant_hasScalarType(&dv->value, &UA_TYPES[UA_TYPES_UINT32])) {
            histBad++;
            continue;
        }
        if (nHist < MAXHIST) {
            histValues[nHist] = *(UA_UInt32 *)dv->value.data;
            histTimes[nHist] = dv->sourceTimestamp;
            nHist++;
        }
    }
    return true;
}

static int history(UA_Client *c) {
    UA_NodeId id = UA_NODEID_STRING(2, "sim.Counter");
    UA_DateTime end = UA_DateTime_now();
    UA_DateTime start = end - 60 * UA_DATETIME_SEC;
    UA_StatusCode st = UA_Client_HistoryRead_raw(c, &id, onHistory, start, end, UA_STRING_NULL, false, 200,
                                                 UA_TIMESTAMPSTORETURN_SOURCE, NULL);
    if (st != UA_STATUSCODE_GOOD) {
        fail("HistoryRead raw", st);
        return 1;
    }
    printf("{\"ev\":\"raw\",\"calls\":%zu,\"bad\":%zu,\"count\":%zu,\"values\":[", histCalls, histBad, nHist);
    for (size_t i = 0; i < nHist; i++)
        printf("%s%u", i ? "," : "", histValues[i]);
    printf("],\"times\":[");
    for (size_t i = 0; i < nHist; i++)
        printf("%s%lld", i ? "," : "", (long long)histTimes[i]);
    printf("]}\n");
    /* Processed: 1 s intervals on whole seconds. */
    UA_DateTime pstart = start / UA_DATETIME_SEC * UA_DATETIME_SEC;
    UA_DateTime pend = end / UA_DATETIME_SEC * UA_DATETIME_SEC;
    const char *names[] = {"Average", "Count", "Maximum"};
    UA_UInt32 aggs[] = {UA_NS0ID_AGGREGATEFUNCTION_AVERAGE, UA_NS0ID_AGGREGATEFUNCTION_COUNT,
                        UA_NS0ID_AGGREGATEFUNCTION_MAXIMUM};
    for (int k = 0; k < 3; k++) {
        UA_ReadProcessedDetails d;
        UA_ReadProcessedDetails_init(&d);
        d.startTime = pstart;
        d.endTime = pend;
        d.processingInterval = 1000;
        UA_NodeId agg = UA_NODEID_NUMERIC(0, aggs[k]);
        d.aggregateTypeSize = 1;
        d.aggregateType = &agg;
        d.aggregateConfiguration.useServerCapabilitiesDefaults = true;
        UA_HistoryReadValueId hv;
        UA_HistoryReadValueId_init(&hv);
        hv.nodeId = id;
        UA_HistoryReadRequest req;
        UA_HistoryReadRequest_init(&req);
        UA_ExtensionObject_setValue(&req.historyReadDetails, &d, &UA_TYPES[UA_TYPES_READPROCESSEDDETAILS]);
        req.timestampsToReturn = UA_TIMESTAMPSTORETURN_SOURCE;
        req.nodesToReadSize = 1;
        req.nodesToRead = &hv;
        UA_HistoryReadResponse resp = UA_Client_Service_historyRead(c, req);
        if (resp.responseHeader.serviceResult != UA_STATUSCODE_GOOD || resp.resultsSize != 1) {
            fail("HistoryRead processed", resp.responseHeader.serviceResult);
            UA_HistoryReadResponse_clear(&resp);
            return 1;
        }
        UA_HistoryReadResult *r = &resp.results[0];
        printf("{\"ev\":\"processed\",\"node\":\"%s\",\"status\":%u,\"intervals\":[", names[k], r->statusCode);
        if (r->historyData.encoding == UA_EXTENSIONOBJECT_DECODED &&
            r->historyData.content.decoded.type == &UA_TYPES[UA_TYPES_HISTORYDATA]) {
            UA_HistoryData *hd = (UA_HistoryData *)r->historyData.content.decoded.data;
            for (size_t i = 0; i < hd->dataValuesSize; i++) {
                UA_DataValue *dv = &hd->dataValues[i];
                double x = 0;
                if (dv->hasValue && UA_Variant_hasScalarType(&dv->value, &UA_TYPES[UA_TYPES_DOUBLE]))
                    x = *(UA_Double *)dv->value.data;
                else if (dv->hasValue && UA_Variant_hasScalarType(&dv->value, &UA_TYPES[UA_TYPES_INT32]))
                    x = *(UA_Int32 *)dv->value.data;
                else if (dv->hasValue && UA_Variant_hasScalarType(&dv->value, &UA_TYPES[UA_TYPES_UINT32]))
                    x = *(UA_UInt32 *)dv->value.data;
                printf("%s{\"t\":%lld,\"status\":%u,\"value\":%.17g,\"has\":%s}", i ? "," : "",
                       (long long)dv->sourceTimestamp, dv->status, x, dv->hasValue ? "true" : "false");
            }
        }
        printf("]}\n");
        UA_HistoryReadResponse_clear(&resp);
    }
    return 0;
}

/* --- secure --- */

static UA_ByteString readFile(const char *path) {
    UA_ByteString b = UA_BYTESTRING_NULL;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return b;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (n > 0 && UA_ByteString_allocBuffer(&b, (size_t)n) == UA_STATUSCODE_GOOD &&
        fread(b.data, 1, (size_t)n, f) != (size_t)n)
        UA_ByteString_clear(&b);
    fclose(f);
    return b;
}

static UA_Logger logger;

/* The client's credentials, from the environment. */
typedef struct {
    UA_ByteString cert, key, server;
    const char *uri, *user, *pass;
} creds;

static int loadCreds(creds *c, const char *mode) {
    c->cert = readFile(getenv("EDGED_CERT"));
    c->key = readFile(getenv("EDGED_KEY"));
    c->server = readFile(getenv("EDGED_SERVER_CERT"));
    c->uri = getenv("EDGED_APP_URI");
    c->user = getenv("EDGED_USER");
    c->pass = getenv("EDGED_PASS");
    if (c->cert.length == 0 || c->key.length == 0 || c->server.length == 0 || !c->uri || !c->user || !c->pass) {
        fprintf(stderr, "%s: EDGED_CERT, EDGED_KEY, EDGED_SERVER_CERT, EDGED_APP_URI, EDGED_USER, EDGED_PASS\n", mode);
        return 2;
    }
    return 0;
}

static void clearCreds(creds *c) {
    UA_ByteString_clear(&c->cert);
    UA_ByteString_clear(&c->key);
    UA_ByteString_clear(&c->server);
}

static UA_StatusCode addPolicy(UA_SecurityPolicy **sps, size_t *n, const char *policy,
                               UA_ByteString cert, UA_ByteString key, const UA_Logger *lg);

/* secureConfig sets up cc for policy (a SecurityPolicy name) and mode with
 * the credentials; the result of the encryption setup. */
static UA_StatusCode secureConfig(UA_ClientConfig *cc, const creds *c, const char *policy, UA_MessageSecurityMode mode) {
    cc->logging = &logger;
    UA_StatusCode st = UA_ClientConfig_setDefaultEncryption(cc, c->cert, c->key, &c->server, 1, NULL, 0);
    char policyUri[128];
    snprintf(policyUri, sizeof policyUri, "http://opcfoundation.org/UA/SecurityPolicy#%s", policy);
    cc->securityMode = mode;
    UA_String_clear(&cc->securityPolicyUri);
    cc->securityPolicyUri = UA_STRING_ALLOC(policyUri);
    /* open62541 leaves the non-AEAD ECC policies out of its default set:
     * add the one asked for, with the (ECC) client certificate; for
     * ECC_curve25519 and the nistP256 AEAD policies, which are in it, this
     * one comes after and changes nothing. */
    if (st == UA_STATUSCODE_GOOD && strncmp(policy, "ECC_", 4) == 0)
        st = addPolicy(&cc->securityPolicies, &cc->securityPoliciesSize, policy, c->cert, c->key, cc->logging);
    UA_String_clear(&cc->clientDescription.applicationUri);
    cc->clientDescription.applicationUri = UA_STRING_ALLOC(c->uri);
    return st;
}

static int secure(const char *url, int probe) {
    creds cr;
    if (loadCreds(&cr, "secure") != 0)
        return 2;
    const char *policies[] = {"Basic256Sha256", "Aes128_Sha256_RsaOaep", "Aes256_Sha256_RsaPss"};
    const char *modes[] = {"Sign", "SignAndEncrypt"};
    int rc = 0;
    int np = probe ? 1 : 3, nm = probe ? 1 : 2, nt = probe ? 1 : 2;
    for (int p = 0; p < np; p++) {
        for (int m = 0; m < nm; m++) {
            for (int tok = 0; tok < nt; tok++) {
                UA_Client *c = UA_Client_new();
                UA_ClientConfig *cc = UA_Client_getConfig(c);
                UA_StatusCode st = secureConfig(cc, &cr, policies[p],
                    m == 0 && !probe ? UA_MESSAGESECURITYMODE_SIGN : UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
                UA_StatusCode rd = 0, wr = 0;
                if (st == UA_STATUSCODE_GOOD)
                    st = tok == 0 ? UA_Client_connect(c, url) : UA_Client_connectUsername(c, url, cr.user, cr.pass);
                if (probe) {
                    printf("{\"ev\":\"connect\",\"status\":%u}\n", st);
                    fflush(stdout);
                    UA_Client_disconnect(c);
                    UA_Client_delete(c);
                    break;
                }
                if (st == UA_STATUSCODE_GOOD) {
                    UA_Variant v;
                    UA_Variant_init(&v);
                    rd = UA_Client_readValueAttribute(c, UA_NODEID_STRING(2, "sim.Counter"), &v);
                    UA_Variant_clear(&v);
                    UA_Float f = 7.5f;
                    UA_Variant_setScalar(&v, &f, &UA_TYPES[UA_TYPES_FLOAT]);
                    wr = UA_Client_writeValueAttribute(c, UA_NODEID_STRING(2, "sim.Setpoint"), &v);
                } else {
                    rc = 1;
                }
                printf("{\"ev\":\"result\",\"policy\":\"%s\",\"mode\":\"%s\",\"token\":\"%s\","
                       "\"connect\":%u,\"read\":%u,\"write\":%u}\n",
                       policies[p], modes[m], tok == 0 ? "anonymous" : "username", st, rd, wr);
                fflush(stdout);
                UA_Client_disconnect(c);
                UA_Client_delete(c);
            }
        }
    }
    clearCreds(&cr);
    return rc;
}

/* addPolicy appends the policy named (ECC_...) to sps with the
 * certificate and key. */
static UA_StatusCode addPolicy(UA_SecurityPolicy **sps, size_t *n, const char *policy,
                               UA_ByteString cert, UA_ByteString key, const UA_Logger *lg) {
    UA_SecurityPolicy *p = (UA_SecurityPolicy *)UA_realloc(*sps, sizeof(UA_SecurityPolicy) * (*n + 1));
    if (!p)
        return UA_STATUSCODE_BADOUTOFMEMORY;
    *sps = p;
    UA_SecurityPolicy *sp = &p[*n];
    UA_StatusCode st;
    if (strcmp(policy, "ECC_nistP256") == 0)
        st = UA_SecurityPolicy_EccNistP256(sp, UA_APPLICATIONTYPE_CLIENT, cert, key, lg);
    else if (strcmp(policy, "ECC_nistP384") == 0)
        st = UA_SecurityPolicy_EccNistP384(sp, UA_APPLICATIONTYPE_CLIENT, cert, key, lg);
    else if (strcmp(policy, "ECC_curve25519") == 0)
        st = UA_SecurityPolicy_EccCurve25519(sp, UA_APPLICATIONTYPE_CLIENT, cert, key, lg);
    else if (strcmp(policy, "ECC_nistP256_AesGcm") == 0)
        st = UA_SecurityPolicy_EccNistP256AesGcm(sp, UA_APPLICATIONTYPE_CLIENT, cert, key, lg);
    else if (strcmp(policy, "ECC_nistP256_ChaChaPoly") == 0)
        st = UA_SecurityPolicy_EccNistP256ChaChaPoly(sp, UA_APPLICATIONTYPE_CLIENT, cert, key, lg);
    else
        st = UA_STATUSCODE_BADSECURITYPOLICYREJECTED;
    if (st == UA_STATUSCODE_GOOD)
        (*n)++;
    return st;
}

/* ecc <policy>: an ECC policy in both modes, anonymously, with a user
 * name, whose password open62541 sends as an EccEncryptedSecret sealed
 * for the ephemeral key edged returns in CreateSession's response (the
 * token policy names the channel's policy), and, with EDGED_USER_CERT
 * and EDGED_USER_KEY, as an X.509 user of the policy's curve. Each
 * session reads and writes; the anonymous one subscribes too, and its
 * secure channel's tokens live 1 s, so the subscription's 2 s span
 * renewals. */
static int ecc(const char *url, const char *policy) {
    creds cr;
    if (loadCreds(&cr, "ecc") != 0)
        return 2;
    UA_ByteString ucert = readFile(getenv("EDGED_USER_CERT")), ukey = readFile(getenv("EDGED_USER_KEY"));
    int ntok = ucert.length > 0 && ukey.length > 0 ? 3 : 2;
    const char *modes[] = {"Sign", "SignAndEncrypt"};
    const char *tokens[] = {"anonymous", "username", "x509"};
    int rc = 0;
    for (int m = 0; m < 2; m++) {
        for (int tok = 0; tok < ntok; tok++) {
            UA_Client *c = UA_Client_new();
            UA_ClientConfig *cc = UA_Client_getConfig(c);
            UA_StatusCode st = secureConfig(cc, &cr, policy,
                m == 0 ? UA_MESSAGESECURITYMODE_SIGN : UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
            cc->secureChannelLifeTime = 1000;
            if (st == UA_STATUSCODE_GOOD && tok == 2) {
                /* The user's key signs the token by the policy, which the
                 * authentication set lacks for the non-AEAD ECC ones. */
                st = UA_ClientConfig_setAuthenticationCert(cc, ucert, ukey);
                if (st == UA_STATUSCODE_GOOD)
                    st = addPolicy(&cc->authSecurityPolicies, &cc->authSecurityPoliciesSize, policy, ucert, ukey, cc->logging);
            }
            UA_StatusCode rd = UA_STATUSCODE_BADNOTCONNECTED, wr = rd;
            if (st == UA_STATUSCODE_GOOD)
                st = tok == 1 ? UA_Client_connectUsername(c, url, cr.user, cr.pass) : UA_Client_connect(c, url);
            int sub = -1;
            size_t values = 0;
            if (st == UA_STATUSCODE_GOOD) {
                UA_Variant v;
                UA_Variant_init(&v);
                rd = UA_Client_readValueAttribute(c, UA_NODEID_STRING(2, "sim.Counter"), &v);
                UA_Variant_clear(&v);
                UA_Float f = 7.5f;
                UA_Variant_setScalar(&v, &f, &UA_TYPES[UA_TYPES_FLOAT]);
                wr = UA_Client_writeValueAttribute(c, UA_NODEID_STRING(2, "sim.Setpoint"), &v);
                nSeen = 0;
                sub = tok == 0 ? subscribe(c) : 0;
                values = nSeen;
            } else {
                rc = 1;
            }
            printf("{\"ev\":\"result\",\"policy\":\"%s\",\"mode\":\"%s\",\"token\":\"%s\","
                   "\"connect\":%u,\"read\":%u,\"write\":%u,\"subscribe\":%d,\"values\":%zu}\n",
                   policy, modes[m], tokens[tok], st, rd, wr, sub, values);
            fflush(stdout);
            UA_Client_disconnect(c);
            UA_Client_delete(c);
        }
    }
    UA_ByteString_clear(&ucert);
    UA_ByteString_clear(&ukey);
    clearCreds(&cr);
    return rc;
}

/* renew <seconds>: one Basic256Sha256 SignAndEncrypt session whose
 * secure channel's tokens live 2 s reads sim.Counter back to back for
 * that many seconds; open62541 renews the channel between the reads.
 * Prints the reads, the failed ones and the first failure's status. */
static int renew(const char *url, double seconds) {
    creds cr;
    if (loadCreds(&cr, "renew") != 0)
        return 2;
    UA_Client *c = UA_Client_new();
    UA_ClientConfig *cc = UA_Client_getConfig(c);
    UA_StatusCode st = secureConfig(cc, &cr, "Basic256Sha256", UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
    cc->secureChannelLifeTime = 2000;
    if (st == UA_STATUSCODE_GOOD)
        st = UA_Client_connect(c, url);
    long reads = 0, failed = 0;
    UA_StatusCode first = UA_STATUSCODE_GOOD;
    if (st == UA_STATUSCODE_GOOD) {
        for (double start = now(); now() - start < seconds; reads++) {
            UA_Variant v;
            UA_Variant_init(&v);
            UA_StatusCode rd = UA_Client_readValueAttribute(c, UA_NODEID_STRING(2, "sim.Counter"), &v);
            UA_Variant_clear(&v);
            if (rd != UA_STATUSCODE_GOOD && failed++ == 0)
                first = rd;
        }
    }
    printf("{\"ev\":\"renew\",\"connect\":%u,\"reads\":%ld,\"failed\":%ld,\"first\":%u}\n",
           st, reads, failed, first);
    fflush(stdout);
    UA_Client_disconnect(c);
    UA_Client_delete(c);
    clearCreds(&cr);
    return st == UA_STATUSCODE_GOOD && failed == 0 ? 0 : 1;
}

/* Warnings and errors of the client go to stderr; stdout has the JSON. */
static void logStderr(void *ctx, UA_LogLevel level, UA_LogCategory cat, const char *msg,
                      va_list args) {
    if (level < UA_LOGLEVEL_WARNING)
        return;
    /* open62541's own format: %S is a UA_String, not a wide string. */
    char buf[1024];
    UA_String out = {sizeof buf, (UA_Byte *)buf};
    UA_String_vformat(&out, msg, args);
    fprintf(stderr, "%.*s\n", (int)out.length, buf);
}

/* --- reverse --- */

/* reverse <port> <policy> <mode>: listens on 127.0.0.1:<port> for edged's
 * reverse connection (OPC 10000-6 §7.1.3) and connects over it. open62541
 * opens the first channel with None for GetEndpoints, then closes it to
 * open the selected endpoint's; with noReconnect it does not dial the
 * server itself, and listens again instead, so that the secure channel too
 * comes over a socket edged opened. Then: a read, a write read back, and a
 * subscription of sim.Counter; and the number of reverse connections edged
 * serves, read from its diagnostics. */
static int reverse(const char *port, const char *policy, const char *mode) {
    creds cr;
    if (loadCreds(&cr, "reverse") != 0)
        return 2;
    UA_Client *c = UA_Client_new();
    UA_ClientConfig *cc = UA_Client_getConfig(c);
    UA_StatusCode st = secureConfig(cc, &cr, policy,
        strcmp(mode, "Sign") == 0 ? UA_MESSAGESECURITYMODE_SIGN : UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
    UA_UserNameIdentityToken *tok = UA_UserNameIdentityToken_new();
    tok->userName = UA_STRING_ALLOC(cr.user);
    tok->password = UA_BYTESTRING_ALLOC(cr.pass);
    UA_ExtensionObject_setValue(&cc->userIdentityToken, tok, &UA_TYPES[UA_TYPES_USERNAMEIDENTITYTOKEN]);
    cc->noReconnect = true;
    cc->tcpReuseAddr = true; /* listen again on the port of the connection just closed (TIME_WAIT) */
    UA_String host = UA_STRING("127.0.0.1");
    UA_UInt16 p = (UA_UInt16)atoi(port);
    if (st == UA_STATUSCODE_GOOD)
        st = UA_Client_startListeningForReverseConnect(c, &host, 1, p);
    printf("{\"ev\":\"listening\",\"status\":%u}\n", st);
    fflush(stdout);
    int listens = 1;
    UA_SessionState ss = UA_SESSIONSTATE_CLOSED;
    double start = now();
    while (st == UA_STATUSCODE_GOOD && now() - start < 60) {
        UA_Client_run_iterate(c, 20);
        UA_SecureChannelState cs;
        UA_StatusCode connect;
        UA_Client_getState(c, &cs, &ss, &connect);
        if (ss == UA_SESSIONSTATE_ACTIVATED)
            break;
        if (cs == UA_SECURECHANNELSTATE_CLOSED && listens < 4) {
            /* The discovery channel closed: wait for edged's next socket. */
            st = UA_Client_startListeningForReverseConnect(c, &host, 1, p);
            listens++;
        }
    }
    UA_StatusCode rd = UA_STATUSCODE_BADNOTCONNECTED, wr = rd, back = rd, diag = rd;
    UA_UInt32 reverseConns = 0;
    int rc = 1;
    if (ss == UA_SESSIONSTATE_ACTIVATED) {
        UA_Variant v;
        UA_Variant_init(&v);
        rd = UA_Client_readValueAttribute(c, UA_NODEID_STRING(2, "sim.Counter"), &v);
        UA_Variant_clear(&v);
        UA_Float f = 6.25f;
        UA_Variant_setScalar(&v, &f, &UA_TYPES[UA_TYPES_FLOAT]);
        wr = UA_Client_writeValueAttribute(c, UA_NODEID_STRING(2, "sim.Setpoint"), &v);
        UA_Variant_init(&v);
        back = UA_Client_readValueAttribute(c, UA_NODEID_STRING(2, "sim.Setpoint"), &v);
        if (back == UA_STATUSCODE_GOOD && !(UA_Variant_hasScalarType(&v, &UA_TYPES[UA_TYPES_FLOAT]) && *(UA_Float *)v.data == 6.25f))
            back = UA_STATUSCODE_BADUNEXPECTEDERROR;
        UA_Variant_clear(&v);
        UA_UInt16 dns = 0;
        UA_String dnsUri = UA_STRING("urn:edged:diagnostics");
        diag = UA_Client_NamespaceGetIndex(c, &dnsUri, &dns);
        if (diag == UA_STATUSCODE_GOOD)
            diag = UA_Client_readValueAttribute(c, UA_NODEID_STRING(dns, "ReverseConnect.Connections"), &v);
        if (diag == UA_STATUSCODE_GOOD && UA_Variant_hasScalarType(&v, &UA_TYPES[UA_TYPES_UINT32]))
            reverseConns = *(UA_UInt32 *)v.data;
        UA_Variant_clear(&v);
        printf("{\"ev\":\"result\",\"policy\":\"%s\",\"mode\":\"%s\",\"token\":\"username\",\"connect\":0,"
               "\"read\":%u,\"write\":%u,\"readback\":%u,\"diag\":%u,\"reverse_connections\":%u,\"listens\":%d}\n",
               policy, mode, rd, wr, back, diag, reverseConns, listens);
        fflush(stdout);
        rc = subscribe(c);
    } else {
        printf("{\"ev\":\"result\",\"policy\":\"%s\",\"mode\":\"%s\",\"connect\":%u,\"listens\":%d}\n", policy, mode,
               st != UA_STATUSCODE_GOOD ? st : UA_STATUSCODE_BADTIMEOUT, listens);
    }
    fflush(stdout);
    UA_Client_disconnect(c);
    UA_Client_delete(c);
    clearCreds(&cr);
    return rc;
}

/* --- alarm --- */

/* The event fields the alarm scenario selects, in order. */
enum { F_EVENTID, F_TYPE, F_SOURCE, F_SEVERITY, F_CONDITION, F_ACTIVE, F_ACKED, F_N };
static UA_ByteString lastEventId;
static int lastActive = -1, lastAcked = -1, seenActive, nEvents;

static int boolField(const UA_Variant *v) {
    return UA_Variant_hasScalarType(v, &UA_TYPES[UA_TYPES_BOOLEAN]) ? *(UA_Boolean *)v->data : -1;
}

static void onEvent(UA_Client *c, UA_UInt32 subId, void *subCtx, UA_UInt32 monId, void *monCtx,
                    const UA_KeyValueMap fields) {
    if (fields.mapSize != F_N)
        return;
    const UA_Variant *f[F_N];
    for (size_t i = 0; i < F_N; i++)
        f[i] = &fields.map[i].value;
    UA_String sine = UA_STRING("sim.Sine");
    if (!UA_Variant_hasScalarType(f[F_SOURCE], &UA_TYPES[UA_TYPES_STRING]) ||
        !UA_String_equal((UA_String *)f[F_SOURCE]->data, &sine))
        return;
    nEvents++;
    int active = boolField(f[F_ACTIVE]), acked = boolField(f[F_ACKED]);
    int severity = UA_Variant_hasScalarType(f[F_SEVERITY], &UA_TYPES[UA_TYPES_UINT16]) ? *(UA_UInt16 *)f[F_SEVERITY]->data : -1;
    printf("{\"ev\":\"event\",\"severity\":%d,\"active\":%d,\"acked\":%d,\"type\":", severity, active, acked);
    if (UA_Variant_hasScalarType(f[F_TYPE], &UA_TYPES[UA_TYPES_NODEID]))
        jnode((UA_NodeId *)f[F_TYPE]->data);
    else
        printf("null");
    printf(",\"condition\":");
    if (UA_Variant_hasScalarType(f[F_CONDITION], &UA_TYPES[UA_TYPES_NODEID]))
        jnode((UA_NodeId *)f[F_CONDITION]->data);
    else
        printf("null");
    printf("}\n");
    if (UA_Variant_hasScalarType(f[F_EVENTID], &UA_TYPES[UA_TYPES_BYTESTRING])) {
        UA_ByteString_clear(&lastEventId);
        UA_ByteString_copy((UA_ByteString *)f[F_EVENTID]->data, &lastEventId);
    }
    lastActive = active;
    lastAcked = acked;
    if (active == 1)
        seenActive = 1;
}

static UA_StatusCode acknowledge(UA_Client *c, const UA_ByteString *eventId) {
    UA_Variant in[2];
    UA_LocalizedText comment = UA_LOCALIZEDTEXT("en", "seen by open62541");
    UA_Variant_setScalar(&in[0], (void *)eventId, &UA_TYPES[UA_TYPES_BYTESTRING]);
    UA_Variant_setScalar(&in[1], &comment, &UA_TYPES[UA_TYPES_LOCALIZEDTEXT]);
    size_t outSize = 0;
    UA_Variant *out = NULL;
    UA_StatusCode st = UA_Client_call(c, UA_NODEID_STRING(2, "sim.Sine/Limit"),
                                      UA_NODEID_NUMERIC(0, UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE_ACKNOWLEDGE),
                                      2, in, &outSize, &out);
    UA_Array_delete(out, outSize, &UA_TYPES[UA_TYPES_VARIANT]);
    return st;
}

/* alarm: subscribes to the Server object's events with a UaExpert-like
 * select clause and a where clause (OfType AlarmConditionType and
 * Severity >= 100), waits for sim.Sine's alarm to become active and end
 * ("event" lines), acknowledges it through Call with a stale EventId and
 * with the last one ("ack" lines), and waits for the event that says it
 * is acknowledged ("acked"). */
static int alarm(UA_Client *c) {
    UA_CreateSubscriptionRequest sr = UA_CreateSubscriptionRequest_default();
    sr.requestedPublishingInterval = 50;
    UA_CreateSubscriptionResponse sresp = UA_Client_Subscriptions_create(c, sr, NULL, NULL, NULL);
    if (sresp.responseHeader.serviceResult != UA_STATUSCODE_GOOD) {
        fail("CreateSubscription", sresp.responseHeader.serviceResult);
        return 1;
    }
    static UA_QualifiedName pEventId, pType, pSource, pSeverity, pActive[2], pAcked[2];
    pEventId = UA_QUALIFIEDNAME(0, "EventId");
    pType = UA_QUALIFIEDNAME(0, "EventType");
    pSource = UA_QUALIFIEDNAME(0, "SourceName");
    pSeverity = UA_QUALIFIEDNAME(0, "Severity");
    pActive[0] = UA_QUALIFIEDNAME(0, "ActiveState");
    pActive[1] = UA_QUALIFIEDNAME(0, "Id");
    pAcked[0] = UA_QUALIFIEDNAME(0, "AckedState");
    pAcked[1] = UA_QUALIFIEDNAME(0, "Id");
    UA_SimpleAttributeOperand sel[F_N];
    struct { UA_UInt32 type; UA_QualifiedName *path; size_t n; UA_UInt32 attr; } spec[F_N] = {
        {UA_NS0ID_BASEEVENTTYPE, &pEventId, 1, UA_ATTRIBUTEID_VALUE},
        {UA_NS0ID_BASEEVENTTYPE, &pType, 1, UA_ATTRIBUTEID_VALUE},
        {UA_NS0ID_BASEEVENTTYPE, &pSource, 1, UA_ATTRIBUTEID_VALUE},
        {UA_NS0ID_BASEEVENTTYPE, &pSeverity, 1, UA_ATTRIBUTEID_VALUE},
        {UA_NS0ID_CONDITIONTYPE, NULL, 0, UA_ATTRIBUTEID_NODEID},
        {UA_NS0ID_ALARMCONDITIONTYPE, pActive, 2, UA_ATTRIBUTEID_VALUE},
        {UA_NS0ID_ACKNOWLEDGEABLECONDITIONTYPE, pAcked, 2, UA_ATTRIBUTEID_VALUE},
    };
    for (size_t i = 0; i < F_N; i++) {
        UA_SimpleAttributeOperand_init(&sel[i]);
        sel[i].typeDefinitionId = UA_NODEID_NUMERIC(0, spec[i].type);
        sel[i].browsePath = spec[i].path;
        sel[i].browsePathSize = spec[i].n;
        sel[i].attributeId = spec[i].attr;
    }
    UA_ElementOperand e1 = {1}, e2 = {2};
    UA_NodeId alarmType = UA_NODEID_NUMERIC(0, UA_NS0ID_ALARMCONDITIONTYPE);
    UA_LiteralOperand ofType, minSeverity;
    UA_Variant_setScalar(&ofType.value, &alarmType, &UA_TYPES[UA_TYPES_NODEID]);
    UA_UInt16 hundred = 100;
    UA_Variant_setScalar(&minSeverity.value, &hundred, &UA_TYPES[UA_TYPES_UINT16]);
    UA_SimpleAttributeOperand severity = sel[F_SEVERITY];
    UA_ExtensionObject andOps[2], ofTypeOps[1], geOps[2];
    UA_ExtensionObject_setValue(&andOps[0], &e1, &UA_TYPES[UA_TYPES_ELEMENTOPERAND]);
    UA_ExtensionObject_setValue(&andOps[1], &e2, &UA_TYPES[UA_TYPES_ELEMENTOPERAND]);
    UA_ExtensionObject_setValue(&ofTypeOps[0], &ofType, &UA_TYPES[UA_TYPES_LITERALOPERAND]);
    UA_ExtensionObject_setValue(&geOps[0], &severity, &UA_TYPES[UA_TYPES_SIMPLEATTRIBUTEOPERAND]);
    UA_ExtensionObject_setValue(&geOps[1], &minSeverity, &UA_TYPES[UA_TYPES_LITERALOPERAND]);
    UA_ContentFilterElement el[3] = {
        {UA_FILTEROPERATOR_AND, 2, andOps},
        {UA_FILTEROPERATOR_OFTYPE, 1, ofTypeOps},
        {UA_FILTEROPERATOR_GREATERTHANOREQUAL, 2, geOps},
    };
    UA_EventFilter filter;
    UA_EventFilter_init(&filter);
    filter.selectClauses = sel;
    filter.selectClausesSize = F_N;
    filter.whereClause.elements = el;
    filter.whereClause.elementsSize = 3;
    UA_MonitoredItemCreateRequest item;
    UA_MonitoredItemCreateRequest_init(&item);
    item.itemToMonitor.nodeId = UA_NODEID_NUMERIC(0, UA_NS0ID_SERVER);
    item.itemToMonitor.attributeId = UA_ATTRIBUTEID_EVENTNOTIFIER;
    item.monitoringMode = UA_MONITORINGMODE_REPORTING;
    item.requestedParameters.queueSize = 100;
    item.requestedParameters.discardOldest = true;
    UA_ExtensionObject_setValue(&item.requestedParameters.filter, &filter, &UA_TYPES[UA_TYPES_EVENTFILTER]);
    UA_MonitoredItemCreateResult mres = UA_Client_MonitoredItems_createEvent(
        c, sresp.subscriptionId, UA_TIMESTAMPSTORETURN_BOTH, item, NULL, onEvent, NULL);
    printf("{\"ev\":\"monitor\",\"status\":%u}\n", mres.statusCode);
    fflush(stdout);
    if (mres.statusCode != UA_STATUSCODE_GOOD)
        return 1;
    /* The alarm becomes active and ends once every 10 s. */
    double start = now();
    while (!(seenActive && lastActive == 0) && now() - start < 40) {
        UA_StatusCode st = UA_Client_run_iterate(c, 20);
        if (st != UA_STATUSCODE_GOOD) {
            fail("run_iterate", st);
            return 1;
        }
    }
    if (!(seenActive && lastActive == 0)) {
        fail("no activation and end of sim.Sine's alarm in 40 s", UA_STATUSCODE_BADTIMEOUT);
        return 1;
    }
    UA_ByteString stale = UA_BYTESTRING("not an event id");
    printf("{\"ev\":\"ack\",\"which\":\"stale\",\"status\":%u}\n", acknowledge(c, &stale));
    printf("{\"ev\":\"ack\",\"which\":\"last\",\"status\":%u}\n", acknowledge(c, &lastEventId));
    fflush(stdout);
    start = now();
    while (lastAcked != 1 && now() - start < 10)
        UA_Client_run_iterate(c, 20);
    printf("{\"ev\":\"acked\",\"acked\":%d,\"events\":%d}\n", lastAcked, nEvents);
    UA_ByteString_clear(&lastEventId);
    return lastAcked == 1 ? 0 : 1;
}

static UA_Logger logger = {logStderr, NULL, NULL};


int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s <endpoint> crawl|writeread|subscribe ... | secure | probe | ecc <policy> | renew <seconds>; %s reverse <port> <policy> <mode>\n", argv[0], argv[0]);
        return 2;
    }
    if (strcmp(argv[2], "secure") == 0 || strcmp(argv[2], "probe") == 0)
        return secure(argv[1], strcmp(argv[2], "probe") == 0);
    if (strcmp(argv[2], "ecc") == 0) {
        if (argc < 4) {
            fprintf(stderr, "usage: %s <endpoint> ecc <policy>\n", argv[0]);
            return 2;
        }
        return ecc(argv[1], argv[3]);
    }
    if (strcmp(argv[2], "renew") == 0) {
        if (argc < 4) {
            fprintf(stderr, "usage: %s <endpoint> renew <seconds>\n", argv[0]);
            return 2;
        }
        return renew(argv[1], atof(argv[3]));
    }
    if (strcmp(argv[1], "reverse") == 0) {
        if (argc != 5) {
            fprintf(stderr, "usage: %s reverse <port> <policy> Sign|SignAndEncrypt\n", argv[0]);
            return 2;
        }
        return reverse(argv[2], argv[3], argv[4]);
    }
    UA_Client *c = UA_Client_new();
    UA_ClientConfig *cc = UA_Client_getConfig(c);
    cc->logging = &logger; /* before setDefault, which hands it on */
    UA_ClientConfig_setDefault(cc);
    cc->securityMode = UA_MESSAGESECURITYMODE_NONE;
    UA_StatusCode st = UA_Client_connect(c, argv[1]);
    if (st != UA_STATUSCODE_GOOD) {
        fail("connect", st);
        UA_Client_delete(c);
        return 1;
    }
    int rc = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "crawl") == 0)
            rc |= crawl(c);
        else if (strcmp(argv[i], "writeread") == 0)
            rc |= writeread(c);
        else if (strcmp(argv[i], "subscribe") == 0)
            rc |= subscribe(c);
        else if (strcmp(argv[i], "history") == 0)
            rc |= history(c);
        else if (strcmp(argv[i], "alarm") == 0)
            rc |= alarm(c);
        else {
            fprintf(stderr, "unknown scenario %s\n", argv[i]);
            rc = 2;
        }
        fflush(stdout);
    }
    UA_Client_disconnect(c);
    UA_Client_delete(c);
    return rc;
}
