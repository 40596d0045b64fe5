import Simulator

/// Trace annotations for people (never hashed): which message is which, so that pictures can
/// draw each one from its send to its delivery or drop, and explanations can say what it carried.
///
/// Message details use record keys and intent ids, one entry per record:
///
///     push 3: r0=f0←i1,f1←i2 r2=delete←i5
///     push-reply 3: r0:saved@2 r2:deleted
///     fetch 4 since 2            fetch 4 everything
///     fetch-reply 4: r0@2=f0←i1,f1←i2 r1@5=delete←i3 → token 5
///     fetch-reply 4: token expired
///     notify
extension SyncWorld {
  /// Annotates message number `seq` when it leaves, and its end at once when the network dropped
  /// it at the door.
  mutating func annotateSend(_ message: Message, _ t: Transmission, seq: Int) {
    trace.annotate(WorldTrace.message, at: now, node: t.from.rawValue, Int64(seq), message.code, Int64(t.to.rawValue), detail: Self.describe(message))
    if t.arrival == nil {
      let reason = Int64(t.dropped?.rawValue ?? DropReason.lost.rawValue)
      trace.annotate(WorldTrace.arrival, at: now, node: t.to.rawValue, Int64(seq), -2 - reason, 0)
    }
  }

  /// What a message carries, in the grammar above.
  static func describe(_ message: Message) -> String {
    switch message {
    case .push(let id, let writes):
      return "push \(id):" + writes.map { w in
        " r\(w.record.key)=" + (w.isDelete ? "delete←i\(w.record.deletedBy)" : writers(w.record))
      }.joined()
    case .pushReply(let id, let results):
      return "push-reply \(id):" + results.map { r in
        switch r {
        case .saved(let rec): " r\(rec.key):saved@\(rec.changeTag)"
        case .conflict(let rec): " r\(rec.key):conflict@\(rec.changeTag)"
        case .refusedDeleted(let rec): " r\(rec.key):refused"
        case .deleted: " -:deleted"
        case .rejected: " -:rejected"
        }
      }.joined()
    case .fetch(let id, let token):
      return "fetch \(id) " + (token.map { "since \($0)" } ?? "everything")
    case .fetchReply(let id, .tokenExpired):
      return "fetch-reply \(id): token expired"
    case .fetchReply(let id, .changes(let records, let token, let more)):
      return "fetch-reply \(id):" + records.map { r in
        " r\(r.key)@\(r.changeTag)=" + (r.isDeleted ? "delete←i\(r.deletedBy)" : writers(r))
      }.joined() + " → token \(token)" + (more ? ", more" : "")
    case .notify:
      return "notify"
    }
  }

  /// `f0←i1,f1←i2`
  static func writers(_ r: RecordState) -> String {
    r.fields.enumerated().map { i, f in "f\(i)←i\(f.writer)" }.joined(separator: ",")
  }
}
