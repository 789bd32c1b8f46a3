/* The open62541 v1.5.7 server as uabench's peer (make bench-peer): the same
 * 120 variables as `uabench server` (ns=1;s=Gateway.D000, U000, B000, ...:
 * Double, UInt32, Boolean in turn), the same stdin protocol (it prints
 * "ready addr=... ns=1 echo=", answers "stats" with its CPU time and
 * quits at "quit" or at the end of its input), so that `uabench load`
 * measures both servers alike. Like edged's scan with its simulator, a
 * callback every 5 ms counts ns=1;s=Counter (UInt32, source timestamp
 * now), and publishing and sampling intervals go down to 5 ms. Counter is
 * historized in open62541's default history database (memory backend,
 * gathered on every write, as edged records sim.Counter on every change),
 * at most 100,000 values per HistoryRead response.
 *
 *   open62541_server PORT CERT.der KEY.der [events=N]
 *
 * With events=N (make bench-peer-events) the 5 ms callback also raises N
 * events of the Server object (BaseEventType, severity 500, message
 * "tick"), as edged does with N alarms on a bit that flips every 5 ms.
 *
 * With bulk=N (make bench-peer's SCADA scenarios) it also serves N UInt16
 * variables ns=1;s=Bulk.T00000.. that change as edged's simulator's churn
 * bank (plc/sim): at each step k of the wall clock (Unix time over
 * 100 ms), the variables i with i % 10 == k % 10 take the value k mod
 * 2^16, written by the 5 ms callback at the first tick of the step.
 *
 * Every client certificate is accepted (loopback only, a benchmark).
 */
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "open62541.h"

static volatile UA_Boolean running = true;

/* Warnings and errors go to stderr: stdout is the protocol. */
static void logStderr(void *ctx, UA_LogLevel level, UA_LogCategory cat, const char *msg, va_list args) {
    if (level < UA_LOGLEVEL_WARNING)
        return;
    char buf[1024];
    UA_String out = {sizeof buf, (UA_Byte *)buf};
    UA_String_vformat(&out, msg, args);
    fprintf(stderr, "%.*s\n", (int)out.length, buf);
}

static UA_Logger logger = {logStderr, NULL, NULL};

static UA_ByteString readFile(const char *path) {
    UA_ByteString b = UA_BYTESTRING_NULL;
    FILE *f = fopen(path, "rb");
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

static UA_UInt32 counter;
static int raiseEvents; /* events per 5 ms tick */

static int nBulk;           /* bulk variables */
static UA_NodeId *bulkIds;
static long long churned;   /* the last step written */

/* churn brings the bulk variables to the wall clock's step (see above). */
static void churn(UA_Server *server) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long long k = ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec) / 100000000LL;
    if (k <= churned)
        return;
    long long from = churned + 1 > k - 9 ? churned + 1 : k - 9;
    for (long long step = from; step <= k; step++) {
        UA_UInt16 v = (UA_UInt16)step;
        UA_Variant var;
        UA_Variant_setScalar(&var, &v, &UA_TYPES[UA_TYPES_UINT16]);
        for (int i = (int)(step % 10); i < nBulk; i += 10)
            UA_Server_writeValue(server, bulkIds[i], var);
    }
    churned = k;
}

/* tick runs every 5 ms on the server's thread: the counter's next value. */
static void tick(UA_Server *server, void *data) {
    (void)data;
    if (nBulk > 0)
        churn(server);
    counter++;
    UA_DataValue dv;
    UA_DataValue_init(&dv);
    UA_Variant_setScalar(&dv.value, &counter, &UA_TYPES[UA_TYPES_UINT32]);
    dv.hasValue = true;
    dv.sourceTimestamp = UA_DateTime_now();
    dv.hasSourceTimestamp = true;
    UA_Server_writeDataValue(server, UA_NODEID_STRING(1, "Counter"), dv);
    for (int i = 0; i < raiseEvents; i++)
        UA_Server_createEvent(server, UA_NODEID_NUMERIC(0, UA_NS0ID_SERVER), UA_NODEID_NUMERIC(0, UA_NS0ID_BASEEVENTTYPE), 500,
                              UA_LOCALIZEDTEXT("en", "tick"), NULL, NULL, NULL);
}

static void *control(void *arg) {
    (void)arg;
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        if (strncmp(line, "stats", 5) == 0) {
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            unsigned long long ns =
                ((unsigned long long)ru.ru_utime.tv_sec + (unsigned long long)ru.ru_stime.tv_sec) * 1000000000ULL +
                ((unsigned long long)ru.ru_utime.tv_usec + (unsigned long long)ru.ru_stime.tv_usec) * 1000ULL;
            printf("stats cpu_ns=%llu total_alloc=0 mallocs=0\n", ns);
            fflush(stdout);
        } else if (strncmp(line, "quit", 4) == 0) {
            break;
        }
    }
    running = false;
    return NULL;
}

int main(int argc, char **argv) {
    int bad = argc < 4;
    for (int i = 4; i < argc; i++)
        if (sscanf(argv[i], "events=%d", &raiseEvents) != 1 && sscanf(argv[i], "bulk=%d", &nBulk) != 1)
            bad = 1;
    if (bad || raiseEvents < 0 || raiseEvents > 1000 || nBulk < 0 || nBulk > 100000) {
        fprintf(stderr, "usage: %s PORT CERT.der KEY.der [events=N] [bulk=N]\n", argv[0]);
        return 2;
    }
    UA_UInt16 port = (UA_UInt16)atoi(argv[1]);
    UA_ByteString cert = readFile(argv[2]), key = readFile(argv[3]);
    if (cert.length == 0 || key.length == 0) {
        fprintf(stderr, "cannot read %s or %s\n", argv[2], argv[3]);
        return 1;
    }
    UA_ServerConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.logging = &logger;
    UA_ServerConfig *config = &cfg;
    UA_StatusCode st = UA_ServerConfig_setDefaultWithSecurityPolicies(config, port, &cert, &key, NULL, 0, NULL, 0, NULL, 0);
    if (st != UA_STATUSCODE_GOOD) {
        fprintf(stderr, "config: %s\n", UA_StatusCode_name(st));
        return 1;
    }
    /* The ECC policies, when their certificates are given (the bench of
     * the handshakes): open62541 leaves the non-AEAD ones out of its
     * default set, and makes ECC_curve25519 only with an Ed25519
     * certificate. */
    const char *ecc[5][3] = {{"PEER_NISTP256_CERT", "PEER_NISTP256_KEY", "ECC_nistP256"},
                             {"PEER_NISTP384_CERT", "PEER_NISTP384_KEY", "ECC_nistP384"},
                             {"PEER_CURVE25519_CERT", "PEER_CURVE25519_KEY", "ECC_curve25519"},
                             {"PEER_NISTP256_CERT", "PEER_NISTP256_KEY", "ECC_nistP256_AesGcm"},
                             {"PEER_NISTP256_CERT", "PEER_NISTP256_KEY", "ECC_nistP256_ChaChaPoly"}};
    for (int i = 0; i < 5; i++) {
        const char *cf = getenv(ecc[i][0]), *kf = getenv(ecc[i][1]);
        if (!cf || !kf)
            continue;
        UA_ByteString ec = readFile(cf), ek = readFile(kf);
        char uri[96];
        snprintf(uri, sizeof uri, "http://opcfoundation.org/UA/SecurityPolicy#%s", ecc[i][2]);
        switch (i) {
        case 0: st = UA_ServerConfig_addSecurityPolicyEccNistP256(config, &ec, &ek); break;
        case 1: st = UA_ServerConfig_addSecurityPolicyEccNistP384(config, &ec, &ek); break;
        case 2: st = UA_ServerConfig_addSecurityPolicyEccCurve25519(config, &ec, &ek); break;
        case 3: st = UA_ServerConfig_addSecurityPolicyEccNistP256AesGcm(config, &ec, &ek); break;
        default: st = UA_ServerConfig_addSecurityPolicyEccNistP256ChaChaPoly(config, &ec, &ek); break;
        }
        if (st == UA_STATUSCODE_GOOD)
            st = UA_ServerConfig_addEndpoint(config, UA_STRING(uri), UA_MESSAGESECURITYMODE_SIGNANDENCRYPT);
        if (st == UA_STATUSCODE_GOOD)
            st = UA_ServerConfig_addEndpoint(config, UA_STRING(uri), UA_MESSAGESECURITYMODE_SIGN);
        if (st != UA_STATUSCODE_GOOD) {
            fprintf(stderr, "%s: %s\n", ecc[i][2], UA_StatusCode_name(st));
            return 1;
        }
        UA_ByteString_clear(&ec);
        UA_ByteString_clear(&ek);
    }
    UA_HistoryDataGathering gathering = UA_HistoryDataGathering_Default(1);
    config->historyDatabase = UA_HistoryDatabase_default(gathering);
    config->publishingIntervalLimits.min = 5.0;
    config->samplingIntervalLimits.min = 5.0;
    UA_CertificateGroup_AcceptAll(&config->secureChannelPKI);
    UA_CertificateGroup_AcceptAll(&config->sessionPKI);
    UA_Server *server = UA_Server_newWithConfig(config);
    if (!server) {
        fprintf(stderr, "cannot create the server\n");
        return 1;
    }
    for (int i = 0; i < 120; i++) {
        char name[32];
        snprintf(name, sizeof name, "Gateway.%c%03d", "DUB"[i % 3], i / 3);
        UA_VariableAttributes attr = UA_VariableAttributes_default;
        UA_Double d = i * 0.5;
        UA_UInt32 u = (UA_UInt32)i;
        UA_Boolean b = i % 2;
        switch (i % 3) {
        case 0: UA_Variant_setScalar(&attr.value, &d, &UA_TYPES[UA_TYPES_DOUBLE]); break;
        case 1: UA_Variant_setScalar(&attr.value, &u, &UA_TYPES[UA_TYPES_UINT32]); break;
        default: UA_Variant_setScalar(&attr.value, &b, &UA_TYPES[UA_TYPES_BOOLEAN]); break;
        }
        attr.displayName = UA_LOCALIZEDTEXT("", name);
        st = UA_Server_addVariableNode(server, UA_NODEID_STRING(1, name), UA_NODEID_NUMERIC(0, UA_NS0ID_OBJECTSFOLDER),
                                       UA_NODEID_NUMERIC(0, UA_NS0ID_ORGANIZES), UA_QUALIFIEDNAME(1, name),
                                       UA_NODEID_NUMERIC(0, UA_NS0ID_BASEDATAVARIABLETYPE), attr, NULL, NULL);
        if (st != UA_STATUSCODE_GOOD) {
            fprintf(stderr, "variable %s: %s\n", name, UA_StatusCode_name(st));
            return 1;
        }
    }
    bulkIds = (UA_NodeId *)calloc((size_t)nBulk + 1, sizeof(UA_NodeId));
    for (int i = 0; i < nBulk; i++) {
        char name[32];
        snprintf(name, sizeof name, "Bulk.T%05d", i);
        UA_VariableAttributes attr = UA_VariableAttributes_default;
        UA_UInt16 v = 0;
        UA_Variant_setScalar(&attr.value, &v, &UA_TYPES[UA_TYPES_UINT16]);
        attr.displayName = UA_LOCALIZEDTEXT("", name);
        bulkIds[i] = UA_NODEID_STRING_ALLOC(1, name);
        st = UA_Server_addVariableNode(server, bulkIds[i], UA_NODEID_NUMERIC(0, UA_NS0ID_OBJECTSFOLDER),
                                       UA_NODEID_NUMERIC(0, UA_NS0ID_ORGANIZES), UA_QUALIFIEDNAME(1, name),
                                       UA_NODEID_NUMERIC(0, UA_NS0ID_BASEDATAVARIABLETYPE), attr, NULL, NULL);
        if (st != UA_STATUSCODE_GOOD) {
            fprintf(stderr, "variable %s: %s\n", name, UA_StatusCode_name(st));
            return 1;
        }
    }
    if (nBulk > 0)
        churn(server);
    {
        UA_VariableAttributes attr = UA_VariableAttributes_default;
        UA_Variant_setScalar(&attr.value, &counter, &UA_TYPES[UA_TYPES_UINT32]);
        attr.displayName = UA_LOCALIZEDTEXT("", "Counter");
        attr.accessLevel = UA_ACCESSLEVELMASK_READ | UA_ACCESSLEVELMASK_HISTORYREAD;
        attr.userAccessLevel = attr.accessLevel;
        attr.historizing = true;
        st = UA_Server_addVariableNode(server, UA_NODEID_STRING(1, "Counter"), UA_NODEID_NUMERIC(0, UA_NS0ID_OBJECTSFOLDER),
                                       UA_NODEID_NUMERIC(0, UA_NS0ID_ORGANIZES), UA_QUALIFIEDNAME(1, "Counter"),
                                       UA_NODEID_NUMERIC(0, UA_NS0ID_BASEDATAVARIABLETYPE), attr, NULL, NULL);
        if (st == UA_STATUSCODE_GOOD) {
            UA_HistorizingNodeIdSettings setting;
            memset(&setting, 0, sizeof setting);
            setting.historizingBackend = UA_HistoryDataBackend_Memory(1, 1000000);
            setting.maxHistoryDataResponseSize = 100000;
            setting.historizingUpdateStrategy = UA_HISTORIZINGUPDATESTRATEGY_VALUESET;
            UA_NodeId cid = UA_NODEID_STRING(1, "Counter");
            st = gathering.registerNodeId(server, gathering.context, &cid, setting);
        }
        if (st == UA_STATUSCODE_GOOD)
            st = UA_Server_addRepeatedCallback(server, tick, NULL, 5.0, NULL);
        if (st != UA_STATUSCODE_GOOD) {
            fprintf(stderr, "counter: %s\n", UA_StatusCode_name(st));
            return 1;
        }
    }
    st = UA_Server_run_startup(server);
    if (st != UA_STATUSCODE_GOOD) {
        fprintf(stderr, "startup: %s\n", UA_StatusCode_name(st));
        return 1;
    }
    printf("ready addr=127.0.0.1:%u ns=1 echo=\n", port);
    fflush(stdout);
    pthread_t t;
    pthread_create(&t, NULL, control, NULL);
    while (running)
        UA_Server_run_iterate(server, true);
    UA_Server_run_shutdown(server);
    UA_Server_delete(server);
    return 0;
}
