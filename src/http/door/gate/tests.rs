use super::*;

const CAPS: Caps = Caps {
    total: 3,
    per_address: 2,
};

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an address")
}

#[test]
fn one_address_cannot_take_more_than_its_share() {
    let gate = Gate::new(CAPS);
    let _a = gate.admit(ip("10.0.0.1")).expect("first");
    let _b = gate.admit(ip("10.0.0.1")).expect("second");
    assert_eq!(gate.admit(ip("10.0.0.1")).err(), Some(Refusal::AddressFull));
    assert!(
        gate.admit(ip("10.0.0.2")).is_ok(),
        "another address still gets in"
    );
}

#[test]
fn a_full_server_of_young_connections_refuses_the_newcomer() {
    let gate = Gate::new(CAPS);
    let _held: Vec<Ticket> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
        .iter()
        .map(|a| gate.admit(ip(a)).expect("under the cap"))
        .collect();
    assert_eq!(gate.admit(ip("10.0.0.4")).err(), Some(Refusal::ServerFull));
}

#[test]
fn a_full_server_closes_the_longest_waiting_connection_for_a_newcomer() {
    let gate = Gate::new(CAPS);
    let held: Vec<Ticket> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
        .iter()
        .map(|a| gate.admit(ip(a)).expect("under the cap"))
        .collect();
    // The first two answered just now; the third has waited since it came.
    let later = held[0].now_ms() + EVICT_AFTER.as_millis() as u64 + 10;
    held[0].slot().answered(later);
    held[1].slot().answered(later);
    std::thread::sleep(EVICT_AFTER + Duration::from_millis(20));
    let newcomer = gate.admit(ip("10.0.0.4")).expect("room is made");
    assert!(held[2].slot().is_evicted(), "the stalled one is closed");
    assert!(!held[0].slot().is_evicted() && !held[1].slot().is_evicted());
    assert!(!newcomer.slot().is_evicted());
    drop(held);
    assert_eq!(gate.open(), 1, "every place but the newcomer's came back");
}

#[test]
fn the_victim_is_the_longest_waiting_and_only_if_it_waited_long_enough() {
    let waiting = [(1, 500), (2, 100), (3, 900)];
    assert_eq!(victim(waiting.into_iter(), 2_000, 1_000), Some(2));
    assert_eq!(victim(waiting.into_iter(), 1_050, 1_000), None);
    assert_eq!(victim(std::iter::empty(), 5_000, 1_000), None);
}

#[test]
fn a_closed_connection_gives_its_place_back() {
    let gate = Gate::new(CAPS);
    let a = gate.admit(ip("10.0.0.1")).expect("first");
    let _b = gate.admit(ip("10.0.0.1")).expect("second");
    drop(a);
    assert_eq!(gate.open(), 1);
    assert!(gate.admit(ip("10.0.0.1")).is_ok());
}

#[test]
fn an_ipv4_client_on_a_dual_stack_socket_is_counted_as_itself() {
    let gate = Gate::new(CAPS);
    let _a = gate.admit(ip("::ffff:10.0.0.1")).expect("first");
    let _b = gate.admit(ip("10.0.0.1")).expect("second");
    assert_eq!(
        gate.admit(ip("::ffff:10.0.0.1")).err(),
        Some(Refusal::AddressFull)
    );
}

fn held(list: &[(&str, usize)]) -> HashMap<IpAddr, usize> {
    list.iter().map(|(a, n)| (ip(a), *n)).collect()
}

/// Admits `n` connections from `address`, all of them kept.
fn fill(gate: &Gate, address: &str, n: usize) -> Vec<Ticket> {
    (0..n)
        .map(|_| gate.admit(ip(address)).expect("under the cap"))
        .collect()
}

#[test]
fn a_newcomer_below_its_fair_share_evicts_the_heaviest_address_at_once() {
    let gate = Gate::new(Caps {
        total: 6,
        per_address: 6,
    });
    let crowd = fill(&gate, "10.0.0.1", 5);
    let other = fill(&gate, "10.0.0.2", 1);
    // Everyone is young: the old rule would refuse.
    let newcomer = gate
        .admit(ip("10.0.0.3"))
        .expect("a newcomer below its share gets in at once");
    let evicted: Vec<bool> = crowd.iter().map(|t| t.slot().is_evicted()).collect();
    assert_eq!(
        evicted.iter().filter(|e| **e).count(),
        1,
        "one of the crowd's connections is closed: {evicted:?}"
    );
    assert!(
        !other[0].slot().is_evicted(),
        "the light address keeps its own"
    );
    assert!(!newcomer.slot().is_evicted());
}

#[test]
fn the_heaviest_address_gives_its_longest_waiting_connection() {
    let gate = Gate::new(Caps {
        total: 4,
        per_address: 4,
    });
    let crowd = fill(&gate, "10.0.0.1", 4);
    let later = crowd[0].now_ms() + 50;
    for (i, ticket) in crowd.iter().enumerate() {
        if i != 2 {
            ticket.slot().answered(later);
        }
    }
    let _newcomer = gate.admit(ip("10.0.0.9")).expect("room is made");
    let evicted: Vec<bool> = crowd.iter().map(|t| t.slot().is_evicted()).collect();
    assert_eq!(
        evicted,
        [false, false, true, false],
        "the one that waited longest"
    );
}

#[test]
fn a_crowd_address_at_its_share_waits_for_the_old_rule() {
    let gate = Gate::new(Caps {
        total: 6,
        per_address: 6,
    });
    let _a = fill(&gate, "10.0.0.1", 3);
    let _b = fill(&gate, "10.0.0.2", 3);
    assert_eq!(
        gate.admit(ip("10.0.0.1")).err(),
        Some(Refusal::ServerFull),
        "an address at its share closes nobody's young connection"
    );
}

#[test]
fn connections_being_closed_no_longer_count_for_their_address() {
    let gate = Gate::new(Caps {
        total: 4,
        per_address: 4,
    });
    let crowd = fill(&gate, "10.0.0.1", 3);
    let _other = fill(&gate, "10.0.0.2", 1);
    let _first = gate.admit(ip("10.0.0.3")).expect("room is made");
    // The crowd now holds two live ones, over the share of four addresses.
    let _second = gate.admit(ip("10.0.0.4")).expect("room is made again");
    let evicted = crowd.iter().filter(|t| t.slot().is_evicted()).count();
    assert_eq!(evicted, 2, "both places came from the crowd");
}

/// One line of the rule's table.
struct Case {
    what: &'static str,
    held: &'static [(&'static str, usize)],
    newcomer: &'static str,
    total: usize,
    rule: Rule,
}

#[test]
fn the_rule_follows_the_newcomers_fair_share() {
    use Rule::{Heaviest, LongestWaiting};
    let cases = [
        Case {
            what: "a new address below its share takes from the heaviest",
            held: &[("10.0.0.1", 5), ("10.0.0.2", 1)],
            newcomer: "10.0.0.3",
            total: 6,
            rule: Heaviest(ip("10.0.0.1")),
        },
        Case {
            what: "a crowd address below its share takes from a heavier crowd address",
            held: &[("10.0.0.1", 4), ("10.0.0.2", 2)],
            newcomer: "10.0.0.2",
            total: 6,
            rule: Heaviest(ip("10.0.0.1")),
        },
        Case {
            what: "an address at its share waits for the old rule",
            held: &[("10.0.0.1", 3), ("10.0.0.2", 3)],
            newcomer: "10.0.0.2",
            total: 6,
            rule: LongestWaiting,
        },
        Case {
            what: "an address over its share waits for the old rule",
            held: &[("10.0.0.1", 5), ("10.0.0.2", 1)],
            newcomer: "10.0.0.1",
            total: 6,
            rule: LongestWaiting,
        },
        Case {
            what: "among equally heavy addresses the lowest gives way",
            held: &[("10.0.0.2", 3), ("10.0.0.1", 3)],
            newcomer: "10.0.0.9",
            total: 6,
            rule: Heaviest(ip("10.0.0.1")),
        },
        Case {
            what: "nobody over the share: nobody is closed at once",
            held: &[("10.0.0.1", 2), ("10.0.0.2", 2), ("10.0.0.3", 2)],
            newcomer: "10.0.0.4",
            total: 12,
            rule: LongestWaiting,
        },
    ];
    for case in cases {
        let got = rule(&held(case.held), ip(case.newcomer), case.total);
        assert_eq!(got, case.rule, "{}", case.what);
    }
}

#[test]
fn the_fair_share_divides_the_cap_among_the_addresses() {
    assert_eq!(fair_share(512, 13), 39);
    assert_eq!(fair_share(512, 1), 512);
    assert_eq!(fair_share(512, 0), 512, "no address yet: all of it");
    assert_eq!(fair_share(3, 4), 0, "more addresses than places");
}

#[test]
fn a_crowds_churn_leaves_room_to_close_for_a_light_newcomer() {
    let gate = Gate::new(Caps {
        total: 20,
        per_address: 20,
    });
    // Room for 6 closing at once; a crowd address may use 3 of it.
    let _heavy = fill(&gate, "10.0.0.1", 8);
    let crowd: Vec<Vec<Ticket>> = ["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"]
        .iter()
        .map(|a| fill(&gate, a, 3))
        .collect();
    // Each crowd address holds 3 of a share of 4: below it, but not light.
    let _ins: Vec<Ticket> = ["10.0.0.2", "10.0.0.3", "10.0.0.4"]
        .iter()
        .map(|a| gate.admit(ip(a)).expect("a crowd address below its share"))
        .collect();
    assert_eq!(
        gate.admit(ip("10.0.0.5")).err(),
        Some(Refusal::ServerFull),
        "three closing: the crowd's half of the room is used up"
    );
    assert!(
        gate.admit(ip("10.0.0.9")).is_ok(),
        "a light newcomer still gets in"
    );
    drop(crowd);
}

#[test]
fn the_last_half_of_the_room_to_close_is_kept_for_light_newcomers() {
    // A cap of 20 lets 6 be closing at once.
    assert_eq!(max_closing(20), 6);
    assert!(may_close(20, 2, false), "the crowd's first half");
    assert!(!may_close(20, 3, false), "the crowd's half is used up");
    assert!(may_close(20, 3, true), "a light newcomer uses the rest");
    assert!(!may_close(20, 6, true), "nobody past the room");
}

#[test]
fn an_address_is_light_at_half_its_share_or_less() {
    let crowd = held(&[("10.0.0.1", 8), ("10.0.0.2", 4), ("10.0.0.3", 3)]);
    assert!(
        is_light(&crowd, ip("10.0.0.9"), 20),
        "a new address holds none"
    );
    assert!(
        is_light(&crowd, ip("10.0.0.3"), 20),
        "3 of a share of 6: half"
    );
    assert!(!is_light(&crowd, ip("10.0.0.2"), 20), "4 of a share of 6");
}
