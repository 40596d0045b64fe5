import SimTesting

/// A user-defined policy, written through the public protocol as the README shows: per-field
/// hybrid-logical-clock LWW, except that of two *concurrent* titles the longer one is kept (of
/// two equally long, the one that sorts last). A title written after seeing another still
/// replaces it, so nothing the oracle counts is lost.
struct PreferLongerTitle: SyncPolicy {
  var base: StandardPolicy = "field-lww-hlc"
  var name: String { "prefer-longer-title" }
  var settings: PolicySettings { base.settings }
  var tracksVersions: Bool { true }  // `isConcurrent` reads the records' version vectors

  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    let decision = base.serverSave(write, current: current, context: context)
    guard case .store(var stored) = decision, let current, !current.isDeleted,
      let title = context.field("title", of: current), write.changed.contains(field: title),
      // Only concurrent writes are a matter of taste: a write made after seeing the other wins.
      write.record.isConcurrent(with: current, in: title),
      case .string(let a) = write.record.fields[title].value, case .string(let b) = current.fields[title].value
    else { return decision }
    // Longer first, then alphabetical: the same choice in any arrival order, so devices converge.
    stored.fields[title] = (a.count, a) > (b.count, b) ? write.record.fields[title] : current.fields[title]
    return .store(stored)
  }

  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    base.deviceApply(remote: remote, local: local, pending: pending, context: context)
  }
}

/// A deliberately broken user-defined policy: once a record has a title, the server keeps it,
/// so a later rename — even one made after seeing the first title — is silently dropped.
struct KeepFirstTitle: SyncPolicy {
  var base: StandardPolicy = "field-lww-hlc"
  var name: String { "keep-first-title" }
  var settings: PolicySettings { base.settings }

  func serverSave(_ write: RecordWrite, current: RecordState?, context: MergeContext) -> SaveDecision {
    let decision = base.serverSave(write, current: current, context: context)
    guard case .store(var stored) = decision, let current, !current.isDeleted,
      let title = context.field("title", of: current), current.fields[title].value != .string("")
    else { return decision }
    stored.fields[title] = current.fields[title]
    return .store(stored)
  }

  func deviceApply(remote: RecordState, local: RecordState?, pending: FieldMask?, context: MergeContext) -> RecordState {
    base.deviceApply(remote: remote, local: local, pending: pending, context: context)
  }
}
