import Replica
@_spi(Kernel) import Simulator

/// A run read back from its typed events (``SyncWorld/events``) into what people look at:
/// intents, every message from its send to each copy's delivery or drop with what it carried,
/// the server's decisions, offline windows, outages, background windows, kills and settle.
/// Shared by ``TimelineSVG`` and ``Explanation``; it reads values, never text.
struct RunHistory {
  /// What became of one copy of a message.
  struct End {
    var time: VirtualTime
    var arrival: Arrival
    var duplicate: Bool

    var delivered: Bool { arrival == .delivered }
    var droppedAtSend: Bool {
      if case .droppedAtSend = arrival { return true }
      return false
    }

    /// What became of the copy, in words: `delivered at 1.100s`, `lost by the network at 2.000s`,
    /// `cut off at 3.100s: iPad had abandoned the request (killed, suspended or offline)`.
    func fate(from: String, to: String, at time: String) -> String {
      switch arrival {
      case .delivered: return "delivered at \(time)"
      case .refused: return "dropped at \(time): \(to == "server" ? "the server went down" : to + " went offline") while it was in flight"
      case .cutOff: return "cut off at \(time): \(from) had abandoned the request (killed, suspended or offline)"
      case .droppedAtSend(let reason):
        switch reason {
        case .senderOffline: return "dropped at \(time): \(from) was offline"
        case .senderDown: return "dropped at \(time): the server was down"
        case .receiverOffline: return "dropped at \(time): \(to) was offline"
        case .receiverDown: return "dropped at \(time): the server was down"
        case .lost: return "lost by the network at \(time)"
        }
      }
    }
  }

  struct Message {
    var seq: Int
    /// Lanes: a device's index, or ``RunHistory/serverNode``.
    var from: Int
    var to: Int
    var sent: VirtualTime
    /// What it carried.
    var payload: Replica.Message
    var ends: [End] = []
    /// The server's decisions on a delivered push, one per write.
    var stores: [Store] = []

    var kind: MessageKind { payload.kind }
    var name: String { kind.name }
    /// The first copy to be delivered, if any.
    var delivery: End? { ends.first(where: \.delivered) }
    var request: UInt64? { payload.requestID }

    /// The records a push sends (writes), or a fetch reply returns.
    var records: [RecordState] {
      switch payload {
      case .push(_, let writes, _): writes.map(\.record)
      case .fetchReply(_, .changes(let records, _, _)), .fetchReply(_, .shared(let records, _, _, _, _, _)): records
      default: []
      }
    }

    /// The write of `key` a push sends.
    func write(of key: RecordKey) -> RecordWrite? {
      guard case .push(_, let writes, _) = payload else { return nil }
      return writes.first { $0.record.key == key }
    }

    /// The copy of `key` a fetch reply returns.
    func fetched(_ key: RecordKey) -> RecordState? {
      switch payload {
      case .fetchReply(_, .changes(let records, _, _)), .fetchReply(_, .shared(let records, _, _, _, _, _)): records.first { $0.key == key }
      default: nil
      }
    }

    /// Whether a shared-database reply says the account lost access to `key`, or that it is gone
    /// from the owner's zone.
    func endsAccess(to key: RecordKey) -> Bool {
      guard case .fetchReply(_, .shared(_, let revoked, _, let gone, _, _)) = payload else { return false }
      return revoked.contains(key) || gone.contains(key)
    }

    /// Whether the message carries record `key` (a push's write, a fetch reply's copy, a shared
    /// reply ending access to it).
    func carries(_ key: RecordKey) -> Bool { write(of: key) != nil || fetched(key) != nil || endsAccess(to: key) }

    /// A fetch's starting token (nil for a fetch of everything), or a fetch reply's next token.
    var token: Int64? {
      switch payload {
      case .fetch(_, let token, _): token
      case .fetchReply(_, .changes(_, let token, _)): token
      default: nil
      }
    }
    var fetchesEverything: Bool {
      if case .fetch(_, nil, _) = payload { return true }
      return false
    }
    var moreComing: Bool {
      if case .fetchReply(_, .changes(_, _, true)) = payload { return true }
      return false
    }
    var tokenExpired: Bool {
      if case .fetchReply(_, .tokenExpired) = payload { return true }
      return false
    }
    /// A push reply's results.
    var results: [WriteResult] {
      if case .pushReply(_, let results) = payload { return results }
      return []
    }
  }

  /// What the server did with one write.
  struct Store {
    var time: VirtualTime
    var key: RecordKey
    var write: RecordWrite
    var result: WriteResult
    /// The device whose push it was.
    var device: Int
    var seq: Int

    var outcome: WriteOutcome { result.outcome }
    var isDelete: Bool { write.isDelete }
    /// What the server holds afterwards, for a save.
    var stored: RecordState? {
      if case .saved(let r) = result { return r }
      return nil
    }
  }

  enum WindowKind: Int, Comparable {
    case offline, down, background, settle
    static func < (a: WindowKind, b: WindowKind) -> Bool { a.rawValue < b.rawValue }
  }

  /// A span of time on one lane.
  struct Window {
    var node: Int
    var kind: WindowKind
    var start: VirtualTime
    var end: VirtualTime
    var label: String
  }

  enum MarkKind {
    case kill
    case clockJump(SimDuration)
    case fact(DeviceFact)
    /// The server forgot a deletion after the retention window (at the first request after it).
    case purged(RecordKey, deletedAt: VirtualTime)
    /// A condition of the server changed (a `reject` line, storage freed, the zone deleted), or a
    /// device's iCloud account changed: a short label and a sentence.
    case condition(label: String, text: String)
    /// A share action on the device's lane: a short label and a sentence without the device's
    /// name. Told in every explanation of a run (who may see what changes for everyone).
    case share(label: String, text: String)
  }

  /// A moment on one lane.
  struct Mark {
    var node: Int
    var time: VirtualTime
    var kind: MarkKind
  }

  let world: SyncWorld
  let names: Vocabulary
  var intents: [Intent] = []
  var messages: [Message] = []
  var windows: [Window] = []
  var marks: [Mark] = []
  var settleStart: VirtualTime?
  var settleEnd: VirtualTime?
  var end: VirtualTime = .zero
  /// Whether the run kept its events (else only intents and facts are known).
  var hasEvents: Bool
  /// Index in ``messages`` by message number, plus one (0: none). Message numbers count from 1
  /// as messages are sent: an array, not a dictionary (a run may send millions).
  var _bySeq: [Int] = []
  /// Index in ``messages`` of each request, by device, kind and request id.
  var requests: [RequestKey: Int] = [:]

  struct RequestKey: Hashable {
    var device: Int
    var kind: MessageKind
    var id: UInt64
  }

  var deviceCount: Int { world.devices.count }
  var serverNode: Int { world.devices.count }

  /// A node's lane.
  func lane(_ n: WorldNode) -> Int {
    switch n {
    case .device(let d): Int(d)
    case .server: serverNode
    }
  }

  /// A lane's node.
  func node(_ lane: Int) -> WorldNode { lane == serverNode ? .server : .device(Int32(lane)) }

  /// `readingEvents`: whether to read the messages, windows and marks (an explanation of a run
  /// without anomalies asks none of them: reading them would hold the whole run's traffic again).
  init(_ result: ScenarioRunner.Result, readingEvents: Bool = true) {
    world = result.world
    names = Vocabulary(world: result.world, recordNames: result.recordNames)
    hasEvents = !result.world.events.isEmpty
    intents = world.log.intents
    guard readingEvents else {
      end = world.now
      return
    }
    _read(world.events)
    for e in world.facts.events { marks.append(Mark(node: Int(e.device), time: e.time, kind: .fact(e.fact))) }
    _findPurges()
    end = max(end, world.now)
  }

  mutating func _read(_ events: [WorldEvent]) {
    var found: [Window] = []
    let serverNode = self.serverNode
    var offlineSince: [VirtualTime?] = Array(repeating: nil, count: deviceCount + 1)
    var backgroundSince: [(VirtualTime, SimDuration)?] = Array(repeating: nil, count: deviceCount)
    func closeBackground(_ d: Int, at t: VirtualTime, _ w: inout [Window]) {
      guard let (start, budget) = backgroundSince[d] else { return }
      w.append(Window(node: d, kind: .background, start: start, end: min(start + budget, t), label: "background \(budget)"))
      backgroundSince[d] = nil
    }
    func goOffline(_ n: Int, at t: VirtualTime) {
      if offlineSince[n] == nil { offlineSince[n] = t }
    }
    func comeBack(_ n: Int, at t: VirtualTime, _ w: inout [Window]) {
      guard let since = offlineSince[n] else { return }
      w.append(Window(node: n, kind: n == serverNode ? .down : .offline, start: since, end: t, label: n == serverNode ? "server down" : "offline"))
      offlineSince[n] = nil
    }
    for e in events {
      end = max(end, e.time)
      switch e.what {
      case .sent(let seq, let from, let to, let payload):
        if seq >= 0 {
          if seq >= _bySeq.count { _bySeq.append(contentsOf: repeatElement(0, count: seq + 1 - _bySeq.count)) }
          _bySeq[seq] = messages.count + 1
        }
        let m = Message(seq: seq, from: lane(from), to: lane(to), sent: e.time, payload: payload)
        if m.kind == .push || m.kind == .fetch, let id = m.request { requests[RequestKey(device: m.from, kind: m.kind, id: id)] = messages.count }
        messages.append(m)
      case .arrived(let seq, _, let arrival, let duplicate):
        guard let i = index(ofMessage: seq) else { continue }
        messages[i].ends.append(End(time: e.time, arrival: arrival, duplicate: duplicate))
      case .decided(let seq, let write, let result):
        guard let i = index(ofMessage: seq) else { continue }
        messages[i].stores.append(Store(time: e.time, key: write.record.key, write: write, result: result, device: messages[i].from, seq: seq))
      case .intent(let id):
        let node = Int(world.log[id].device)
        closeBackground(node, at: e.time, &found)
      case .device(let d, let change):
        let node = Int(d)
        switch change {
        case .killed:
          marks.append(Mark(node: node, time: e.time, kind: .kill))
          closeBackground(node, at: e.time, &found)
        case .background(let budget):
          closeBackground(node, at: e.time, &found)
          backgroundSince[node] = (e.time, budget)
        case .clockJumped(let by):
          marks.append(Mark(node: node, time: e.time, kind: .clockJump(by)))
        case .offline:
          goOffline(node, at: e.time)
        case .online:
          comeBack(node, at: e.time, &found)
        case .account(let a):
          let text = a.map { "signs into iCloud account \(names.account($0))" } ?? "signs out of iCloud"
          marks.append(Mark(node: node, time: e.time, kind: .condition(label: a == nil ? "signed out" : "signed in", text: text)))
        case .upgraded(let version):
          marks.append(Mark(node: node, time: e.time, kind: .condition(label: "app v\(version)", text: "the app is updated to version \(version)")))
          closeBackground(node, at: e.time, &found)
        case .file(let key, let field, let changed, let name):
          let what = "\(names.record(key)).\(names.field(key, Int(field)))"
          let text =
            name.map { "the app \(changed ? "changes" : "deletes") the file of \(what) (\($0))" }
            ?? "the app would \(changed ? "change" : "delete") the file of \(what), which is not on the device"
          marks.append(Mark(node: node, time: e.time, kind: .condition(label: changed ? "file changed" : "file deleted", text: text)))
        case .stagingPurged(let n):
          marks.append(
            Mark(node: node, time: e.time, kind: .condition(label: "staging purged", text: "the system purges the staging area (\(n) fetched files)"))
          )
        }
      case .server(let up):
        if up { comeBack(serverNode, at: e.time, &found) } else { goOffline(serverNode, at: e.time) }
      case .settleStarted:
        settleStart = e.time
        // Settle heals every fault: every device online, the server up, every app foreground.
        for n in offlineSince.indices { comeBack(n, at: e.time, &found) }
        for d in 0..<deviceCount { closeBackground(d, at: e.time, &found) }
      case .settled:
        settleEnd = e.time
      case .storageFreed(let bytes):
        let text = "the user frees \(ByteCount.format(bytes)) of iCloud storage"
        marks.append(Mark(node: serverNode, time: e.time, kind: .condition(label: "freed \(ByteCount.format(bytes))", text: text)))
      case .rejecting(let rule):
        let records = rule.keys.map(names.record).joined(separator: ", ")
        let text =
          "the server answers saves of \(records) with \(rule.error)" + (rule.retryAfter.map { " (retry after \(VirtualTime.zero + $0))" } ?? "")
          + " until \(rule.until)"
        marks.append(Mark(node: serverNode, time: e.time, kind: .condition(label: "\(rule.error) \(records)", text: text)))
      case .zoneDeleted(let d, let reason):
        let text: String
        switch reason {
        case .deleted: text = "the app on \(d.map(names.device) ?? "a device") deletes its zone"
        case .purged: text = "the user purges the app's data in \(d.map(names.device) ?? "a device")'s Settings"
        case .encryptedDataReset: text = "an encrypted-data reset: the server loses the zone"
        }
        marks.append(Mark(node: serverNode, time: e.time, kind: .condition(label: "zone \(reason)", text: text)))
      case .share(let d, let action, let done):
        let what = names.shareAction(action)
        let text = done ? what : "tries to: \(what) — refused (offline, signed out, or not its account's to do)"
        marks.append(Mark(node: Int(d), time: e.time, kind: .share(label: done ? what : "share refused", text: text)))
      case .shareRefused(let d, let share, let root, _, _):
        let text =
          "tries to share \(names.record(root)) as \(names.share(share)) — refused with serverRecordChanged: the change tag it saves \(names.record(root)) with is not the server's"
        marks.append(Mark(node: Int(d), time: e.time, kind: .share(label: "share refused", text: text)))
      case .fact, .finalState:
        break
      }
    }
    for n in offlineSince.indices { comeBack(n, at: end, &found) }
    for d in 0..<deviceCount { closeBackground(d, at: .distantFuture, &found) }
    windows = found
    if let s = settleStart {
      windows.append(Window(node: -1, kind: .settle, start: s, end: max(settleEnd ?? end, s), label: "settle"))
    }
    windows.sort { ($0.start, $0.node, $0.kind) < ($1.start, $1.node, $1.kind) }
  }

  /// A deletion is purged at the first request the server handles once the retention window has
  /// passed, unless the record changed again first (`ServerState.purge`).
  mutating func _findPurges() {
    let retention = world.config.policy.settings.retention
    let arrivals = messages.flatMap { m in m.to == serverNode ? m.ends.filter(\.delivered).map(\.time) : [] }.sorted()
    let all = stores
    for (i, s) in all.enumerated() where s.outcome == .deleted {
      let due = s.time + retention
      guard let at = arrivals.first(where: { $0 >= due }) else { continue }
      if all[(i + 1)...].contains(where: { $0.key == s.key && $0.time <= at && $0.outcome != .deleted }) { continue }
      marks.append(Mark(node: serverNode, time: at, kind: .purged(s.key, deletedAt: s.time)))
    }
  }

  /// Every server decision, in time order.
  var stores: [Store] { messages.flatMap(\.stores) }

  /// The message with number `seq`.
  func message(_ seq: Int) -> Message? { index(ofMessage: seq).map { messages[$0] } }

  /// The index in ``messages`` of message number `seq`, if it was sent.
  func index(ofMessage seq: Int) -> Int? {
    guard seq >= 0, seq < _bySeq.count, _bySeq[seq] > 0 else { return nil }
    return _bySeq[seq] - 1
  }

  /// The intent with id `id`, if there is one.
  func intent(_ ref: IntentRef) -> Intent? {
    ref.id >= 1 && Int(ref.id) <= intents.count ? intents[Int(ref.id) - 1] : nil
  }
}
