import SimTesting

/// A user-defined policy, written through the public protocol as the README shows: per-field
/// hybrid-logical-clock LWW, except that of two *concurrent* titles the longer one is kept (of
/// two equally long, the one that sorts last). A title written after seeing another still
/// replaces it, so nothing the oracle counts is lost.
struct PreferLongerTitle: SyncPolicy {
  var base = StandardPolicy(preset: "field-lww-hlc")!
  var name: String { "prefer-longer-title" }
  var settings: PolicySettings { base.settings }
  var tracksVersions: Bool { true }  // `saw` reads the records' version vectors

  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    let decision = base.serverSave(write, current: current, context: context)
    guard case .store(var stored) = decision, let current, !current.isDeleted,
      let title = context.schema.types[Int(write.record.type)].fieldIndex(named: "title"),
      write.changed & (1 << UInt64(title)) != 0
    else { return decision }
    let mine = write.record.fields[title]
    let theirs = current.fields[title]
    // Only concurrent writes are a matter of taste: a write made after seeing the other wins.
    guard !Self.saw(write.record, theirs.stamp), !Self.saw(current, mine.stamp),
      case .string(let a) = mine.value, case .string(let b) = theirs.value
    else { return decision }
    // Longer first, then alphabetical: the same choice in any arrival order, so devices converge.
    stored.fields[title] = (a.count, a) > (b.count, b) ? mine : theirs
    return .store(stored)
  }

  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    base.deviceApply(remote: remote, local: local, pending: pending, context: context)
  }

  /// Whether `record` had incorporated the write stamped `stamp`.
  static func saw(_ record: RecordState, _ stamp: Stamp) -> Bool {
    let seen = record.versions[stamp.device]
    return stamp.device < 0 || (seen.wall, seen.logical) >= (stamp.hlcWall, stamp.hlcLogical)
  }
}

/// A deliberately broken user-defined policy: once a record has a title, the server keeps it,
/// so a later rename — even one made after seeing the first title — is silently dropped.
struct KeepFirstTitle: SyncPolicy {
  var base = StandardPolicy(preset: "field-lww-hlc")!
  var name: String { "keep-first-title" }
  var settings: PolicySettings { base.settings }

  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    let decision = base.serverSave(write, current: current, context: context)
    guard case .store(var stored) = decision, let current, !current.isDeleted,
      let title = context.schema.types[Int(write.record.type)].fieldIndex(named: "title"),
      current.fields[title].value != .string("")
    else { return decision }
    stored.fields[title] = current.fields[title]
    return .store(stored)
  }

  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    base.deviceApply(remote: remote, local: local, pending: pending, context: context)
  }
}
