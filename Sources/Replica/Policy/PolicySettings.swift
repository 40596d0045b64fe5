@_spi(Kernel) import Simulator

/// Every axis of a sync policy (`policies.md`), as plain values. A preset is a named
/// `PolicySettings`; a policy spec (`field-lww-hlc delete=tombstone retention=30d`) is a preset
/// plus overrides.
public struct PolicySettings: Hashable, Sendable {
  public enum Granularity: String, CaseIterable, Sendable { case record, field }
  public enum Winner: String, CaseIterable, Sendable { case arrival, clock, hlc }
  public enum Save: String, CaseIterable, Sendable {
    case allKeys = "all-keys", changedKeys = "changed-keys", ifUnchanged = "if-unchanged"
  }
  public enum Delete: String, CaseIterable, Sendable { case hard, tombstone }
  public enum Refetch: String, CaseIterable, Sendable { case diff, naive }
  public enum Conflict: String, CaseIterable, Sendable {
    case deleteWins = "delete-wins", updateWins = "update-wins"
  }
  public enum Text: String, CaseIterable, Sendable { case whole, merge }
  public enum Outbox: String, CaseIterable, Sendable { case durable, memory }
  public enum Unit: String, CaseIterable, Sendable {
    case resumable, markFirst = "mark-first"
  }
  public enum Token: String, CaseIterable, Sendable {
    case afterApply = "after-apply", beforeApply = "before-apply"
  }

  public var granularity: Granularity = .field
  public var winner: Winner = .hlc
  public var save: Save = .changedKeys
  public var delete: Delete = .tombstone
  public var retention: SimDuration = .days(30)
  public var refetch: Refetch = .diff
  public var conflict: Conflict = .deleteWins
  public var text: Text = .whole
  public var outbox: Outbox = .durable
  public var unit: Unit = .resumable
  public var token: Token = .afterApply
  public var batch: Int = 100

  public init() {}

  /// The settings as `key=value` pairs in the order of `policies.md`.
  public var pairs: [(key: String, value: String)] {
    [
      ("granularity", granularity.rawValue), ("winner", winner.rawValue), ("save", save.rawValue),
      ("delete", delete.rawValue), ("retention", retention.description), ("refetch", refetch.rawValue),
      ("conflict", conflict.rawValue), ("text", text.rawValue), ("outbox", outbox.rawValue),
      ("unit", unit.rawValue), ("token", token.rawValue), ("batch", String(batch)),
    ]
  }
}
