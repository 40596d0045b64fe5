@_spi(Kernel) import Simulator

// What the trace hash sees of the data (`oracle.md`, "Trace hash"): every message's payload —
// values, provenance, stamps, change tags — and every node's final state. Two runs that sent
// different things or ended differently hash differently.

extension Stamp {
  func fold(into h: inout TraceHasher) {
    h.combine(clock)
    h.combine(hlcWall)
    h.combine(UInt64(UInt32(bitPattern: hlcLogical)) | UInt64(UInt32(bitPattern: device)) << 32)
  }
}

extension Value {
  func fold(into h: inout TraceHasher) {
    switch self {
    case .null: h.combine(1 as UInt64)
    case .string(let s):
      h.combine(2 as UInt64)
      h.combine(s)
    case .int(let i):
      h.combine(3 as UInt64)
      h.combine(i)
    case .bool(let b):
      h.combine(4 as UInt64)
      h.combine(b)
    case .date(let ns):
      h.combine(5 as UInt64)
      h.combine(ns)
    case .ref(let k):
      h.combine(6 as UInt64)
      h.combine(k)
    case .text(let t):
      h.combine(7 as UInt64)
      h.combine(t.atoms.count)
      for a in t.atoms {
        h.combine(UInt64(UInt32(bitPattern: a.id.intent)) | UInt64(UInt32(bitPattern: a.id.offset)) << 32)
        h.combine(UInt64(a.scalar.value) | UInt64(UInt32(bitPattern: a.deletedBy)) << 32)
        let parent = a.parent.map { UInt64(UInt32(bitPattern: $0.intent)) | UInt64(UInt32(bitPattern: $0.offset)) << 32 } ?? .max
        h.combine(parent)
      }
    // (New kinds take new tags: the words fed for the kinds above are as before.)
    case .double(let d):
      h.combine(8 as UInt64)
      h.combine(d.bitPattern)
    case .bytes(let b):
      h.combine(9 as UInt64)
      h.combine(b.count)
      var word: UInt64 = 0
      for (i, byte) in b.enumerated() {
        word |= UInt64(byte) << (8 * UInt64(i % 8))
        if i % 8 == 7 {
          h.combine(word)
          word = 0
        }
      }
      if b.count % 8 != 0 { h.combine(word) }
    case .content(let c):
      h.combine(10 as UInt64)
      h.combine(c.name)
      h.combine(UInt64(bitPattern: c.size) &* 4 | (c.isAsset ? 2 : 0) | (c.hasData ? 1 : 0))
    }
  }
}

extension RecordState {
  /// The whole copy: identity, provenance, values, stamps, tag and version vector.
  package func fold(into h: inout TraceHasher) {
    h.combine(UInt64(UInt32(bitPattern: key)) | UInt64(UInt32(bitPattern: type)) << 32)
    h.combine(UInt64(UInt32(bitPattern: creator)) | UInt64(UInt32(bitPattern: creatorDevice)) << 32)
    h.combine(UInt64(UInt32(bitPattern: deletedBy)))
    h.combine(changeTag)
    stamp.fold(into: &h)
    deleteStamp.fold(into: &h)
    // (Fields and versions read in place in the shared storage: a copy of one would retain and
    // release its value.)
    _s.fields.withUnsafeBufferPointer { fields in
      h.combine(fields.count)
      for i in fields.indices {
        h.combine(fields[i].writer)
        fields[i].stamp.fold(into: &h)
        fields[i].value.fold(into: &h)
      }
    }
    _s.versions.entries.withUnsafeBufferPointer { versions in
      h.combine(versions.count)
      for e in versions {
        h.combine(e.wall)
        h.combine(e.logical)
      }
    }
  }
}

extension Message {
  /// The payload: request ids, tokens, every record carried and every write result.
  package func fold(into h: inout TraceHasher) {
    h.combine(code)
    switch self {
    case .push(let id, let writes, let zone):
      h.combine(id)
      if zone != 0 { h.combine(0x2017e as UInt64 | UInt64(zone) << 20) }
      writes.withUnsafeBufferPointer { writes in
        for i in writes.indices {
          h.combine(writes[i].changed.rawValue)
          h.combine(writes[i].isDelete)
          h.combine(writes[i].baseTag)
          if writes[i].zone != 0 { h.combine(0x2016e as UInt64 | UInt64(writes[i].zone) << 20) }
          if let atomic = writes[i].atomic { h.combine(atomic ? 0xa7 as UInt64 : 0xa6) }
          writes[i].record.fold(into: &h)
        }
      }
    case .pushReply(let id, let results):
      h.combine(id)
      for i in results.indices {
        switch results[i] {
        case .saved(let record):
          h.combine(1 as UInt64)
          record.fold(into: &h)
        case .conflict(let record):
          h.combine(2 as UInt64)
          record.fold(into: &h)
        case .refusedDeleted(let record):
          h.combine(3 as UInt64)
          record.fold(into: &h)
        case .deleted:
          h.combine(4 as UInt64)
        case .rejected(let type):
          h.combine(5 as UInt64)
          h.combine(type)
        case .failed(let error, let retryAfter):
          h.combine(6 as UInt64)
          h.combine(error.code)
          h.combine(retryAfter?.nanoseconds ?? -1)
        }
      }
    case .fetch(let id, let token, let zone):
      h.combine(id)
      h.combine(token ?? -1)
      if zone != 0 { h.combine(0x2017e as UInt64 | UInt64(zone) << 20) }
    case .fetchReply(let id, .changes(let records, let token, let more)):
      h.combine(id)
      h.combine(token)
      h.combine(more)
      records.withUnsafeBufferPointer { records in
        for i in records.indices { records[i].fold(into: &h) }
      }
    case .fetchShared(let id, let token):
      h.combine(id)
      h.combine(0x5ade as UInt64)
      h.combine(token ?? -1)
    case .fetchReply(let id, .shared(let records, let revoked, let readOnly, let gone, let token, let more)):
      h.combine(id)
      h.combine(0x5adf as UInt64)
      h.combine(token)
      h.combine(more)
      for k in revoked { h.combine(Int64(k)) }
      for k in readOnly { h.combine(Int64(k) << 1 | 1) }
      for k in gone { h.combine(Int64(k) << 2 | 2) }
      records.withUnsafeBufferPointer { records in
        for i in records.indices { records[i].fold(into: &h) }
      }
    case .fetchReply(let id, .tokenExpired):
      h.combine(id)
      h.combine(0xdead as UInt64)
    case .fetchReply(let id, .zoneDeleted(let reason, let epoch)):
      h.combine(id)
      h.combine(0x20de1 as UInt64)
      h.combine(reason.code)
      h.combine(Int64(epoch))
    case .fetchReply(let id, .failed(let error, let retryAfter)):
      h.combine(id)
      h.combine(0xfa11 as UInt64)
      h.combine(error.code)
      h.combine(retryAfter?.nanoseconds ?? -1)
    case .notify:
      break
    case .zones(let id, let changes, let zone):
      h.combine(id)
      h.combine(Int64(zone))
      for c in changes { h.combine(Int64(c.zone) << 1 | (c.isDelete ? 1 : 0)) }
    case .zonesReply(let id, let results):
      h.combine(id)
      for r in results {
        switch r {
        case .done: h.combine(1 as UInt64)
        case .failed(let error, let retryAfter):
          h.combine(6 as UInt64)
          h.combine(error.code)
          h.combine(retryAfter?.nanoseconds ?? -1)
        }
      }
    }
  }
}

extension SyncWorld {
  /// Folds every device's store (visible and pending-deleted copies) and the server's records
  /// into the trace, one `final-state` record per node carrying the node's digest.
  mutating func recordFinalState() {
    for d in devices.indices {
      var h = TraceHasher()
      let count = devices[d].store.fold(into: &h)
      h.combine(devices[d].outbox.entries.count)
      trace.record(WorldTrace.finalState, at: now, node: Int32(d), Int64(bitPattern: h.value), Int64(count))
      note(.finalState(.device(Int32(d)), digest: h.value, records: count))
    }
    var h = TraceHasher()
    var count = 0
    for s in servers {
      count += s.records.fold(into: &h)
      h.combine(s.head)
    }
    trace.record(WorldTrace.finalState, at: now, node: serverNode.rawValue, Int64(bitPattern: h.value), Int64(count))
    note(.finalState(.server, digest: h.value, records: count))
  }
}

extension RecordTable {
  /// Folds every record into `h`, in key order, read in place; returns how many there are.
  func fold(into h: inout TraceHasher) -> Int {
    var n = 0
    _slots.withUnsafeBufferPointer { slots in
      for i in slots.indices where slots[i]?.key != nil {
        slots[i]!.fold(into: &h)
        n += 1
      }
    }
    return n
  }
}
