import Replica
@_spi(Kernel) import Simulator

extension RunHistory {
  /// The server's decisions on one record, in time order.
  func stores(of key: RecordKey) -> [Store] { stores.filter { $0.key == key } }

  /// The server decision that took `loser`'s value of `field` out of record `key`: the save of
  /// the loser's own push that kept another value, or the first later save that replaced it.
  func decisiveStore(key: RecordKey, field: Int, loser: IntentID) -> Store? {
    var held: IntentID?
    for s in stores(of: key) where s.outcome == .saved {
      let sent = field < s.write.record.fields.count ? s.write.record.fields[field].writer : nil
      guard let stored = s.stored, field < stored.fields.count else { continue }
      let now = stored.fields[field].writer
      if sent == loser, now != loser { return s }
      if held == loser, now != loser { return s }
      held = now
    }
    return nil
  }

  /// The first push that carried intent `id` as a field writer or as a delete, and the store
  /// the server made of it (if it arrived).
  func firstPush(carrying id: IntentID, key: RecordKey) -> (message: Message, store: Store?)? {
    for m in messages where m.kind == .push {
      guard let w = m.write(of: key) else { continue }
      let carries = w.isDelete ? w.record.deletedBy == id : w.record.fields.contains { $0.writer == id }
      guard carries else { continue }
      return (m, m.stores.first { $0.key == key })
    }
    return nil
  }

  /// Messages that carry record `key` (pushes, their replies, fetch replies), in send order.
  func messages(carrying key: RecordKey) -> [Message] {
    messages.filter { m in
      if m.carries(key) { return true }
      if m.kind == .pushReply, let push = request(answeredBy: m), push.carries(key) { return true }
      return false
    }
  }

  /// The request a reply answers (same request id, from the device the reply goes to).
  func request(answeredBy reply: Message) -> Message? {
    guard let id = reply.request else { return nil }
    let kind: MessageKind
    switch reply.kind {
    case .pushReply: kind = .push
    case .fetchReply: kind = .fetch
    default: return nil
    }
    return requests[RequestKey(device: reply.to, kind: kind, id: id)].map { messages[$0] }
  }

  /// The first save that brought record `key` back on the server after it was deleted there.
  func revivingStore(key: RecordKey) -> Store? {
    var deleted = false
    for s in stores(of: key) {
      if s.outcome == .deleted { deleted = true }
      if s.outcome == .saved, deleted { return s }
    }
    return nil
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
