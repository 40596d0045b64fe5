import Replica
@_spi(Kernel) import Simulator

extension Explainer {
  struct StoryLine {
    var time: String
    var text: String
  }

  /// Everything that happened to one record, in order: its intents, the messages that carried
  /// it and what became of them, the server's decisions, the connectivity and lifecycle of the
  /// devices involved, purges and facts.
  func story(of key: RecordKey, anomaly a: Anomaly) -> [StoryLine] {
    // At one instant: connectivity and lifecycle first, then intents, messages, facts.
    var items: [(t: VirtualTime, rank: Int, order: Int, text: String)] = []
    var rank = 0
    func add(_ t: VirtualTime, _ text: String) { items.append((t, rank, items.count, text)) }
    let r = names.record(key)
    let involved = Set(a.intents.compactMap { history.intent($0).map { Int($0.device) } } + a.devices.map { Int($0.index) })
    rank = 1
    for i in history.intents where i.record == key {
      // Not every intent is the user's: say when a delete rule or a de-duplication made it.
      let maker =
        i.keptInstead.map { " (its engine, removing a duplicate of \(names.record($0)): unique=dedupe)" }
        ?? (i.trigger != 0 ? " (by a delete rule, for i\(i.trigger))" : "")
      add(i.trueTime, "\(names.node(Int(i.device))) makes i\(i.id)\(maker): \(names.what(i))" + (i.ignored.map { " — ignored: \($0)" } ?? ""))
    }
    rank = 2
    for m in history.messages(carrying: key) {
      add(m.sent, messageLine(m, key: key))
    }
    for m in history.messages where m.tokenExpired && involved.contains(m.to) {
      add(m.sent, "\(names.node(m.from)) → \(names.node(m.to))  fetch-reply #\(m.seq) token expired — " + fates(m))
    }
    rank = 0
    for w in history.windows where w.node >= 0 && (involved.contains(w.node) || w.node == history.serverNode) {
      let who = names.node(w.node)
      switch w.kind {
      case .offline:
        add(w.start, "\(who) goes offline")
        if w.end < history.end, w.end != history.settleStart { add(w.end, "\(who) comes back online") }
      case .down:
        add(w.start, "the server goes down")
        if w.end != history.settleStart { add(w.end, "the server comes back up") }
      case .background:
        add(w.start, "\(who) goes to the background with a \(w.label.dropFirst("background ".count)) budget (until \(w.end))")
      case .settle:
        break
      }
    }
    for m in history.marks {
      switch m.kind {
      case .kill: rank = 0
      case .purged: rank = 1
      default: rank = 3
      }
      switch m.kind {
      case .kill where involved.contains(m.node):
        add(m.time, "\(names.node(m.node)) is killed (memory lost, local store kept)")
      case .clockJump(let by) where involved.contains(m.node):
        add(m.time, "\(names.node(m.node))'s clock jumps by \(by)")
      case .purged(key, let deletedAt):
        add(
          m.time,
          "the server purges the tombstone of \(r) (deleted at \(time(deletedAt)), retention \(settings.retention)) as it handles the next request")
      case .fact(let fact) where involved.contains(m.node):
        if let text = factText(fact, key: key, device: m.node) { add(m.time, text) }
      case .condition(_, let text) where involved.contains(m.node) || m.node == history.serverNode:
        add(m.time, (m.node == history.serverNode ? "" : "\(names.node(m.node)) ") + text)
      case .share(_, let text):
        add(m.time, "\(names.node(m.node)) \(text)")
      default:
        break
      }
    }
    rank = 0
    if let s = history.settleStart { add(s, "settle: every device online, faults healed, sync until quiet") }
    return items.sorted { ($0.t, $0.rank, $0.order) < ($1.t, $1.rank, $1.order) }.map { StoryLine(time: time($0.t), text: $0.text) }
  }

  /// A fact in words. For an app the preset's setting that made it is not named (`account=wipe`):
  /// the app's code did it.
  func factText(_ fact: DeviceFact, key: RecordKey, device: Int) -> String? {
    let who = names.node(device)
    func setting(_ words: String) -> String { isApp ? "" : " (\(words))" }
    switch fact {
    case .outboxLost(let keys) where keys.contains(key):
      return "\(who)'s in-memory outbox, with \(names.record(key))'s pending upload, dies with the app (outbox=memory)"
    case .batchAbandoned(let keys, let cause) where keys.contains(key):
      return
        "\(who)'s push of \(keys.map(names.record).joined(separator: ", ")) is cut off (\(cause)); mark-first had already cleared their outbox entries"
    case .rejected(key, let type):
      return "\(who) learns the server rejects type \(type) for good"
    case .reappeared(key, _):
      return "\(names.record(key)) becomes visible again on \(who), which had seen it deleted"
    case .fetchDropped(let n, let cause):
      return "\(who) drops \(n) fetched record\(n == 1 ? "" : "s") before applying \(n == 1 ? "it" : "them") (\(cause))"
    case .gaveUp(let keys, let error, let told) where keys.contains(key):
      return "\(who) gives up uploading \(names.record(key)) after \(error)" + (told ? " and tells the user" : "; the app shows it synced")
    case .stalled(let keys, let error) where keys.contains(key):
      return "settle gives up with \(names.record(key)) still unsent on \(who)" + (error.map { ", waiting on \($0)" } ?? "")
    case .wipedOnAccountChange(let keys) where keys.contains(key):
      return "\(who) deletes its local data on the account change, \(names.record(key))'s unsent change with it" + setting("account=wipe")
    case .setAside(let keys, let account) where keys.contains(key):
      return "settle ends with \(names.record(key))'s unsent change set aside on \(who) with account \(names.account(account))"
    case .permissionRefused(let keys, let reverted) where keys.contains(key):
      return "\(who) is refused the save of \(names.record(key)) with permissionFailure and "
        + (reverted ? "takes the server's record back, telling the user" : "keeps showing the edit as saved" + setting("permission-failure=ignore"))
    case .accessEnded(let removed, let kept) where removed.contains(key) || kept.contains(key):
      return "\(who) learns its account has no access to \(names.record(key)) any more and "
        + (removed.contains(key) ? "removes its copy" : "keeps showing it" + setting("access-ended=keep"))
    case .zoneGone(let reason, let wiped, let reuploaded) where wiped.contains(key) || reuploaded.contains(key):
      return "\(who) learns the zone was deleted (\(reason)) and "
        + (wiped.contains(key) ? "deletes its copy of \(names.record(key))" : "queues \(names.record(key)) to upload again")
    default:
      return nil
    }
  }

  /// `iPad → server push #23 n1 (title←i1, body←i2) — arrived 10.100s: saved as tag 2 (…)`
  func messageLine(_ m: RunHistory.Message, key: RecordKey) -> String {
    var text = "\(names.node(m.from)) → \(names.node(m.to))  \(m.name) #\(m.seq)"
    if m.kind == .pushReply {
      text += " " + names.contents(m, in: history)
    } else if let w = m.write(of: key) {
      text += " " + names.pushed(w)
    } else if let r = m.fetched(key) {
      text += " " + names.fetched(r)
    } else if case .fetchReply(_, .shared(_, let revoked, _, _, _, _)) = m.payload, m.endsAccess(to: key) {
      text +=
        revoked.contains(key)
        ? " (shared database): no access to \(names.record(key)) any more" : " (shared database): \(names.record(key)) is gone from the owner's zone"
    }
    if m.kind == .fetchReply, m.moreComing { text += " (more pages follow)" }
    text += " — " + fates(m)
    if let s = m.stores.first(where: { $0.key == key }) {
      text += "; the server " + storeWords(s)
    }
    return text
  }

  /// `arrived 10.100s` / `lost by the network` / `arrived 1.2s, and a duplicate copy at 1.3s`.
  func fates(_ m: RunHistory.Message) -> String {
    guard !m.ends.isEmpty else { return "still in flight at the end" }
    return m.ends.map { e in
      (e.duplicate ? "a duplicate copy " : "") + e.fate(from: names.node(m.from), to: names.node(m.to), at: time(e.time))
    }.joined(separator: "; ")
  }

  /// `saved it as tag 2 (title←i1, body←i2)` / `deleted it` / `refused it: deleted`.
  func storeWords(_ s: RunHistory.Store) -> String {
    switch s.result {
    case .saved(let stored):
      let kept = names.fields(stored, only: nil, stamps: false)
      let changed = s.write.record.fields.map(\.writer) != stored.fields.map(\.writer)
      return "saved it as tag \(stored.changeTag) (\(kept))" + (changed ? ", not all of what was sent" : "")
    case .conflict(let current): return "answered conflict (conflict with tag \(current.changeTag))"
    case .refusedDeleted: return "refused it: the record is deleted"
    case .deleted: return "deleted it"
    case .rejected(let type): return "rejected it (rejected type \(type))"
    case .failed(let error, let retryAfter): return "failed it: \(Vocabulary.error(error, retryAfter: retryAfter))"
    }
  }
}
