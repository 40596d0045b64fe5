import Replica
@_spi(Kernel) import Simulator

/// Messages and server decisions in words, with record and field names: `n1 (title←i1, body←i2)`.
extension Vocabulary {
  /// What a message carries.
  func contents(_ m: RunHistory.Message, in history: RunHistory) -> String {
    switch m.payload {
    case .push(_, let writes, _):
      return writes.map(pushed).joined(separator: "; ")
    case .pushReply(_, let results):
      let push = history.request(answeredBy: m)
      return results.enumerated().map { k, result -> String in
        let key: RecordKey?
        switch result {
        case .saved(let r), .conflict(let r), .refusedDeleted(let r): key = r.key
        case .deleted, .rejected, .failed:
          guard case .push(_, let writes, _)? = push?.payload, k < writes.count else {
            key = nil
            break
          }
          key = writes[k].record.key
        }
        let r = key.map(record) ?? "?"
        switch result {
        case .saved(let s): return "\(r) saved as tag \(s.changeTag)"
        case .conflict(let s): return "\(r) conflict (server at tag \(s.changeTag))"
        case .refusedDeleted: return "\(r) refused: deleted on the server"
        case .deleted: return "\(r) deleted"
        case .rejected: return "\(r) rejected"
        case .failed(let error, let retryAfter): return "\(r) failed: \(Vocabulary.error(error, retryAfter: retryAfter))"
        }
      }.joined(separator: "; ")
    case .fetch(_, let token, _):
      return token.map { "changes since token \($0)" } ?? "everything (no token)"
    case .fetchShared(_, let token):
      return "shared database: " + (token.map { "changes since token \($0)" } ?? "everything (no token)")
    case .fetchReply(_, .shared(let records, let revoked, let readOnly, let gone, let token, let more)):
      var parts = records.map(fetched)
      if !revoked.isEmpty { parts.append("no access any more to " + revoked.map(record).joined(separator: ", ")) }
      if !readOnly.isEmpty { parts.append("read-only: " + readOnly.map(record).joined(separator: ", ")) }
      if !gone.isEmpty { parts.append("gone from the zone: " + gone.map(record).joined(separator: ", ")) }
      return (parts.isEmpty ? "no changes" : parts.joined(separator: "; ")) + "; next token \(token)" + (more ? ", more to come" : "")
    case .fetchReply(_, .tokenExpired):
      return "token expired"
    case .fetchReply(_, .zoneDeleted(let reason, _)):
      return "the zone was deleted (\(reason))"
    case .fetchReply(_, .failed(let error, let retryAfter)):
      return "refused: \(Vocabulary.error(error, retryAfter: retryAfter))"
    case .fetchReply(_, .changes(let records, let token, let more)):
      let list = records.map(fetched)
      return (list.isEmpty ? "no changes" : list.joined(separator: "; ")) + "; next token \(token)" + (more ? ", more to come" : "")
    case .notify:
      return "something changed"
    case .zones(_, let changes, _):
      return changes.map { "\($0.isDelete ? "delete" : "save") zone \($0.zone)" }.joined(separator: "; ")
    case .zonesReply(_, let results):
      return results.map { r in
        switch r {
        case .done: "done"
        case .failed(let error, let retryAfter): "failed: \(Vocabulary.error(error, retryAfter: retryAfter))"
        }
      }.joined(separator: "; ")
    }
  }

  /// `n1 (title←i1, body←i2)` or `delete n1 (i5)`: one write of a push.
  func pushed(_ w: RecordWrite) -> String {
    w.isDelete ? "delete \(record(w.record.key)) (i\(w.record.deletedBy))" : "\(record(w.record.key)) (" + writers(w.record) + ")"
  }

  /// `n1 tag 2 (title←i1, body←i2)` or `n1 tag 2 deleted by i5`: one copy a fetch returns.
  func fetched(_ r: RecordState) -> String {
    r.isDeleted ? "\(record(r.key)) tag \(r.changeTag) deleted by i\(r.deletedBy)" : "\(record(r.key)) tag \(r.changeTag) (" + writers(r) + ")"
  }

  /// `title←i1, body←i2`.
  func writers(_ r: RecordState) -> String {
    r.fields.enumerated().map { i, f in "\(field(r.key, i))←\(Self.writer(f.writer))" }.joined(separator: ", ")
  }

  /// ` — sent title←i1, body←i2; holds title←i1, body←i2 as tag 2`.
  func storeResult(_ s: RunHistory.Store) -> String {
    var text = ""
    if !s.write.record.fields.isEmpty { text += " — sent " + fields(s.write.record, only: nil, stamps: false) }
    if let stored = s.stored, !stored.fields.isEmpty { text += "; holds " + fields(stored, only: nil, stamps: false) + " as tag \(stored.changeTag)" }
    return text
  }

  /// `title←i1, body←i2`, optionally one field, optionally with stamps:
  /// `body←i2 (clock 3.000s, hlc 3.000s+0)`.
  func fields(_ r: RecordState, only field: Int?, stamps: Bool) -> String {
    r.fields.enumerated().filter { field == nil || $0.offset == field }.map { i, f in
      "\(self.field(r.key, i))←\(Self.writer(f.writer))" + (stamps ? " (\(Self.stamp(f.stamp)))" : "")
    }.joined(separator: ", ")
  }

  /// `clock 3.000s, hlc 3.000s+0`: a policy's stamp, exact.
  static func stamp(_ s: Stamp) -> String {
    "clock \(SimDuration(nanoseconds: s.clock).secondsDescription), hlc \(SimDuration(nanoseconds: s.hlcWall).secondsDescription)+\(s.hlcLogical)"
  }

  /// `zoneBusy (retry after 30s)`.
  static func error(_ error: CloudKitError, retryAfter: SimDuration?) -> String {
    error.rawValue + (retryAfter.map { " (retry after \(VirtualTime.zero + $0))" } ?? "")
  }
}
