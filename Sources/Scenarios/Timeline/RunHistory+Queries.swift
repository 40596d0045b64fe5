import Replica
import Simulator

extension RunHistory {
  /// The server's decisions on one record, in time order.
  func stores(of key: RecordKey) -> [Store] { stores.filter { $0.key == key } }

  /// The server decision that took `loser`'s value of `field` out of record `key`: the save of
  /// the loser's own push that kept another value, or the first later save that replaced it.
  func decisiveStore(key: RecordKey, field: Int, loser: IntentID) -> Store? {
    var held: IntentID?
    for s in stores(of: key) where s.outcome == 1 {
      let sent = s.detail.sent(field)?.writer
      guard let now = s.detail.result(field)?.writer else { continue }
      if sent == loser, now != loser { return s }
      if held == loser, now != loser { return s }
      held = now
    }
    return nil
  }

  /// The first push that carried intent `id` as a field writer or as a delete, and the store
  /// the server made of it (if it arrived).
  func firstPush(carrying id: IntentID, key: RecordKey) -> (message: Message, store: Store?)? {
    for m in messages where m.code == 1 {
      guard let e = m.detail.entry(for: key), e.deletedBy == id || e.writers.contains(where: { $0.writer == id }) else { continue }
      return (m, m.stores.first { $0.key == key })
    }
    return nil
  }

  /// Messages that carry record `key` (pushes, their replies, fetch replies), in send order.
  func messages(carrying key: RecordKey) -> [Message] {
    messages.filter { m in
      if m.detail.entry(for: key) != nil { return true }
      if m.code == 2, let push = request(answeredBy: m), push.detail.entry(for: key) != nil { return true }
      return false
    }
  }

  /// The push a push reply answers (same request id, from the device the reply goes to).
  func request(answeredBy reply: Message) -> Message? {
    guard reply.code == 2 || reply.code == 4, let id = reply.detail.request else { return nil }
    return requests["\(reply.to):\(reply.code - 1):\(id)"].map { messages[$0] }
  }

  /// The intent behind an id string such as `i7`.
  func intent(_ text: String) -> Intent? {
    guard text.hasPrefix("i"), let id = Int(text.dropFirst()), id >= 1, id <= intents.count else { return nil }
    return intents[id - 1]
  }
}

extension Anomaly {
  /// The losing intent and the write that beat it: the first other intent concurrent with the
  /// loser (the culprit of a record-level save), else the next one named.
  func pair(in history: RunHistory) -> (loser: Intent, winner: Intent)? {
    let named = intents.compactMap { history.intent($0) }
    guard let loser = named.first, named.count > 1 else { return nil }
    let rest = named.dropFirst()
    if kind == .deleteUpdateConflict { return (loser, rest.first!) }
    return (loser, rest.first { $0.isConcurrent(with: loser) } ?? rest.first!)
  }
}

extension RunHistory {
  /// The first save that brought record `key` back on the server after it was deleted there.
  func revivingStore(key: RecordKey) -> Store? {
    var deleted = false
    for s in stores(of: key) {
      if s.outcome == 4 { deleted = true }
      if s.outcome == 1, deleted { return s }
    }
    return nil
  }
}
