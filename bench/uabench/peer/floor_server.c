/* The floor of make bench-peer: a server that answers the Read loads of
 * `uabench peer` with canned responses and does nothing else, so that its
 * CPU per Read is what the kernel's loopback and one epoll loop cost.
 * One thread, non-blocking sockets, level-triggered epoll: each readable
 * connection is read until it would block, every complete chunk in it is
 * answered, and the answers leave in one write. Hello gets an
 * Acknowledge, an OpenSecureChannel (SecurityPolicy None) and the MSG
 * requests get the response `uabench floorgen` encoded for their type,
 * with the request id, the sequence number and the request handle
 * patched; CloseSecureChannel closes the connection. A request of
 * another type is answered with Bad_ServiceUnsupported (a ServiceFault).
 *
 *   floor_server PORT RESPONSES
 *
 * It prints "ready addr=127.0.0.1:PORT" (PORT 0: one the kernel chose) and
 * runs until killed. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXCANNED 16
#define INBUF (1 << 20)

static struct {
    uint32_t type; /* the request's 4-byte NodeId, little-endian */
    uint32_t len;
    uint8_t *msg;
} canned[MAXCANNED];
static int ncanned;

/* The OpenSecureChannelRequest's 4-byte NodeId (i=446). */
#define OPN_REQUEST (0x01u | 446u << 16)

typedef struct {
    int fd;
    uint8_t *in;
    size_t inLen;
    uint8_t *out;
    size_t outLen, outCap;
    uint32_t seq;
    int wantOut; /* registered for EPOLLOUT */
} conn;

static uint32_t get32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static void put32(uint8_t *p, uint32_t v) { p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24; }

static uint8_t *reserve(conn *c, size_t n) {
    if (c->outLen + n > c->outCap) {
        size_t cap = c->outCap ? c->outCap : 1 << 16;
        while (cap < c->outLen + n)
            cap *= 2;
        uint8_t *o = realloc(c->out, cap);
        if (!o)
            return NULL;
        c->out = o;
        c->outCap = cap;
    }
    uint8_t *p = c->out + c->outLen;
    c->outLen += n;
    return p;
}

static int findCanned(uint32_t type) {
    for (int i = 0; i < ncanned; i++)
        if (canned[i].type == type)
            return i;
    return -1;
}

/* nodeIdLen is the length of the encoded NodeId at p (of at most n bytes),
 * or 0 when it does not fit or is not one. */
static size_t nodeIdLen(const uint8_t *p, size_t n) {
    if (n < 1)
        return 0;
    size_t l;
    switch (p[0] & 0x3f) {
    case 0: l = 2; break;
    case 1: l = 4; break;
    case 2: l = 7; break;
    case 4: l = 19; break;
    case 3:
    case 5:
        if (n < 7)
            return 0;
        l = 7 + ((int32_t)get32(p + 3) > 0 ? get32(p + 3) : 0);
        break;
    default: return 0;
    }
    return l <= n ? l : 0;
}

/* A ServiceFault: type, Timestamp, RequestHandle, ServiceResult, empty
 * DiagnosticInfo, null StringTable, null AdditionalHeader. */
static const uint8_t fault[] = {0x01, 0x00, 0x8d, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                0x00, 0x00, 0x0b, 0x80, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00};

/* answer appends the response to one MSG chunk; -1 closes. */
static int answerMSG(conn *c, const uint8_t *chunk, uint32_t size) {
    if (size < 28)
        return -1;
    uint32_t type = get32(chunk + 24);
    int k = findCanned(type);
    const uint8_t *msg = k >= 0 ? canned[k].msg : fault;
    uint32_t len = k >= 0 ? canned[k].len : sizeof fault;
    uint8_t *p = reserve(c, 24 + len);
    if (!p)
        return -1;
    memcpy(p, "MSGF", 4);
    put32(p + 4, 24 + len);
    memcpy(p + 8, chunk + 8, 8);   /* SecureChannelId, TokenId */
    put32(p + 16, ++c->seq);        /* SequenceNumber */
    memcpy(p + 20, chunk + 20, 4); /* RequestId */
    memcpy(p + 24, msg, len);
    /* RequestHandle: after the request's type, AuthenticationToken and
     * Timestamp; in the response after its type and Timestamp. */
    size_t tl = nodeIdLen(chunk + 28, size - 28);
    if (tl > 0 && 28 + tl + 12 <= size)
        memcpy(p + 24 + 12, chunk + 28 + tl + 8, 4);
    return 0;
}

/* answerOPN appends the OpenSecureChannel response; -1 closes. */
static int answerOPN(conn *c, const uint8_t *chunk, uint32_t size) {
    static const char policy[] = "http://opcfoundation.org/UA/SecurityPolicy#None";
    /* The request's security header: policy URI, certificate, thumbprint. */
    size_t off = 12;
    for (int i = 0; i < 3; i++) {
        if (off + 4 > size)
            return -1;
        int32_t l = (int32_t)get32(chunk + off);
        off += 4 + (l > 0 ? (size_t)l : 0);
    }
    if (off + 8 > size)
        return -1;
    uint32_t reqID = get32(chunk + off + 4);
    int k = findCanned(OPN_REQUEST);
    if (k < 0)
        return -1;
    size_t hdr = 12 + 4 + sizeof policy - 1 + 8;
    uint32_t total = hdr + 8 + canned[k].len;
    uint8_t *p = reserve(c, total);
    if (!p)
        return -1;
    memcpy(p, "OPNF", 4);
    put32(p + 4, total);
    put32(p + 8, 1); /* SecureChannelId */
    put32(p + 12, sizeof policy - 1);
    memcpy(p + 16, policy, sizeof policy - 1);
    put32(p + 16 + sizeof policy - 1, 0xffffffffu); /* SenderCertificate: null */
    put32(p + 20 + sizeof policy - 1, 0xffffffffu); /* ReceiverCertificateThumbprint: null */
    put32(p + hdr, ++c->seq);
    put32(p + hdr + 4, reqID);
    memcpy(p + hdr + 8, canned[k].msg, canned[k].len);
    return 0;
}

static int answerHEL(conn *c) {
    uint8_t *p = reserve(c, 28);
    if (!p)
        return -1;
    memcpy(p, "ACKF", 4);
    put32(p + 4, 28);
    put32(p + 8, 0);        /* ProtocolVersion */
    put32(p + 12, 1 << 16); /* ReceiveBufferSize */
    put32(p + 16, 1 << 16); /* SendBufferSize */
    put32(p + 20, 0);       /* MaxMessageSize */
    put32(p + 24, 0);       /* MaxChunkCount */
    return 0;
}

/* serve answers the complete chunks in c's input; -1 closes c. */
static int serve(conn *c) {
    size_t at = 0;
    while (c->inLen - at >= 8) {
        const uint8_t *chunk = c->in + at;
        uint32_t size = get32(chunk + 4);
        if (size < 8 || size > INBUF)
            return -1;
        if (c->inLen - at < size)
            break;
        int rc;
        if (memcmp(chunk, "MSG", 3) == 0)
            rc = answerMSG(c, chunk, size);
        else if (memcmp(chunk, "OPN", 3) == 0)
            rc = answerOPN(c, chunk, size);
        else if (memcmp(chunk, "HEL", 3) == 0)
            rc = answerHEL(c);
        else
            rc = -1; /* CLO, or anything else: the end */
        if (rc < 0)
            return -1;
        at += size;
    }
    memmove(c->in, c->in + at, c->inLen - at);
    c->inLen -= at;
    return 0;
}

/* flush writes c's output; 1 when some is left (wait for EPOLLOUT). */
static int flush(conn *c) {
    size_t done = 0;
    while (done < c->outLen) {
        ssize_t n = write(c->fd, c->out + done, c->outLen - done);
        if (n < 0) {
            if (errno == EAGAIN)
                break;
            return -1;
        }
        done += (size_t)n;
    }
    memmove(c->out, c->out + done, c->outLen - done);
    c->outLen -= done;
    return c->outLen > 0;
}

static void drop(int ep, conn *c) {
    epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
}

static int load(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    uint8_t h[8];
    while (ncanned < MAXCANNED && fread(h, 1, 8, f) == 8) {
        canned[ncanned].type = get32(h);
        canned[ncanned].len = get32(h + 4);
        canned[ncanned].msg = malloc(canned[ncanned].len);
        if (!canned[ncanned].msg || fread(canned[ncanned].msg, 1, canned[ncanned].len, f) != canned[ncanned].len) {
            fclose(f);
            return -1;
        }
        ncanned++;
    }
    fclose(f);
    return ncanned > 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s PORT RESPONSES\n", argv[0]);
        return 2;
    }
    if (load(argv[2]) != 0) {
        fprintf(stderr, "cannot load the responses of %s (uabench floorgen)\n", argv[2]);
        return 1;
    }
    int ln = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(ln, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)atoi(argv[1]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(ln, (struct sockaddr *)&a, sizeof a) != 0 || listen(ln, 512) != 0) {
        perror("listen");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, ln, &ev);
    socklen_t al = sizeof a;
    getsockname(ln, (struct sockaddr *)&a, &al);
    printf("ready addr=127.0.0.1:%u\n", ntohs(a.sin_port));
    fflush(stdout);
    struct epoll_event evs[64];
    for (;;) {
        int n = epoll_wait(ep, evs, 64, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            perror("epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            conn *c = evs[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(ln, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conn *nc = calloc(1, sizeof *nc);
                    if (!nc || !(nc->in = malloc(INBUF))) {
                        free(nc);
                        close(fd);
                        continue;
                    }
                    nc->fd = fd;
                    struct epoll_event e = {.events = EPOLLIN, .data.ptr = nc};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
                }
                continue;
            }
            int dead = 0;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
                for (;;) {
                    if (c->inLen == INBUF) {
                        dead = 1;
                        break;
                    }
                    ssize_t r = read(c->fd, c->in + c->inLen, INBUF - c->inLen);
                    if (r > 0) {
                        c->inLen += (size_t)r;
                        continue;
                    }
                    if (r < 0 && errno == EAGAIN)
                        break;
                    dead = 1; /* end of stream or error */
                    break;
                }
                if (serve(c) < 0)
                    dead = 1;
            }
            int left = dead ? -1 : flush(c);
            if (dead || left < 0) {
                drop(ep, c);
                continue;
            }
            if (left != c->wantOut) {
                struct epoll_event e = {.events = left ? EPOLLIN | EPOLLOUT : EPOLLIN, .data.ptr = c};
                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
                c->wantOut = left;
            }
        }
    }
}
