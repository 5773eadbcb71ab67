// CTetherNetlink: the rtnetlink structures and macros that Swift cannot import on its own.
// Not API: only TetherReachability's Linux back-end uses it.
#pragma once

#ifdef __linux__

#include <linux/if.h>
#include <linux/fib_rules.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

// The NLMSG_* and RTA_* function-like macros, as functions Swift can call.

static inline unsigned int tether_nlmsg_align(unsigned int length) { return NLMSG_ALIGN(length); }
static inline unsigned int tether_nlmsg_hdrlen(void) { return NLMSG_HDRLEN; }
static inline unsigned int tether_nlmsg_length(unsigned int payload) { return NLMSG_LENGTH(payload); }
static inline unsigned int tether_nlmsg_space(unsigned int payload) { return NLMSG_SPACE(payload); }
static inline void *tether_nlmsg_data(const struct nlmsghdr *header) { return NLMSG_DATA(header); }

static inline int tether_nlmsg_ok(const struct nlmsghdr *header, int remaining) {
    return NLMSG_OK(header, remaining);
}

static inline const struct nlmsghdr *tether_nlmsg_next(const struct nlmsghdr *header, int *remaining) {
    return NLMSG_NEXT(header, *remaining);
}

static inline unsigned int tether_rta_align(unsigned int length) { return RTA_ALIGN(length); }
static inline unsigned int tether_rta_length(unsigned int payload) { return RTA_LENGTH(payload); }
static inline void *tether_rta_data(const struct rtattr *attribute) { return RTA_DATA(attribute); }
static inline unsigned int tether_rta_payload(const struct rtattr *attribute) { return RTA_PAYLOAD(attribute); }
static inline int tether_rta_ok(const struct rtattr *attribute, int remaining) { return RTA_OK(attribute, remaining); }

static inline const struct rtattr *tether_rta_next(const struct rtattr *attribute, int *remaining) {
    return RTA_NEXT(attribute, *remaining);
}

// Where the attributes of each message kind start (IFLA_RTA, IFA_RTA and RTM_RTA are not exported to user space
// by every header version, so they are spelled out).
static inline unsigned int tether_ifinfomsg_attributes_offset(void) {
    return NLMSG_ALIGN(sizeof(struct ifinfomsg));
}
static inline unsigned int tether_ifaddrmsg_attributes_offset(void) {
    return NLMSG_ALIGN(sizeof(struct ifaddrmsg));
}
static inline unsigned int tether_rtmsg_attributes_offset(void) { return NLMSG_ALIGN(sizeof(struct rtmsg)); }
static inline unsigned int tether_fib_rule_hdr_attributes_offset(void) {
    return NLMSG_ALIGN(sizeof(struct fib_rule_hdr));
}

// Multipath next hops (RTA_MULTIPATH).
static inline int tether_rtnh_ok(const struct rtnexthop *hop, int remaining) { return RTNH_OK(hop, remaining); }
static inline const struct rtnexthop *tether_rtnh_next(const struct rtnexthop *hop) { return RTNH_NEXT(hop); }
static inline unsigned int tether_rtnh_align(unsigned int length) { return RTNH_ALIGN(length); }

// A pipe whose ends are close-on-exec and non-blocking from the start (Glibc's module does not declare pipe2, and
// defining _GNU_SOURCE here would change glibc's types in this module; CTetherNetlink.c defines it).
int tether_pipe_cloexec_nonblocking(int ends[2]);

#endif  // __linux__
