@_spi(Kernel) import Simulator

/// Every axis of a sync policy (`policies.md`), as plain values. A preset is a named
/// `PolicySettings`; a policy spec (`field-lww-hlc delete=tombstone retention=30d`) is a preset
/// plus overrides.
public struct PolicySettings: Hashable, Sendable {
  /// The `granularity` axis: the conflict unit is the whole record, or each field on its own.
  public enum Granularity: String, CaseIterable, Sendable { case record, field }
  /// The `winner` axis: of two concurrent saves, the later arrival at the server wins, or the
  /// higher device clock, or the higher hybrid logical clock.
  public enum Winner: String, CaseIterable, Sendable { case arrival, clock, hlc }
  /// The `save` axis, CloudKit's save policies: overwrite all keys, only the changed keys, or
  /// reject a save based on a stale change tag (`if-unchanged`) so that the device merges.
  public enum Save: String, CaseIterable, Sendable {
    case allKeys = "all-keys"
    case changedKeys = "changed-keys"
    case ifUnchanged = "if-unchanged"
  }
  /// The `delete` axis: the server forgets a deleted record (`hard`) or keeps a tombstone for the
  /// retention window.
  public enum Delete: String, CaseIterable, Sendable { case hard, tombstone }
  /// The `refetch` axis: after "token expired", a device deletes the local rows the full refetch
  /// did not return (`diff`) or keeps them (`naive`, which leaves zombies).
  public enum Refetch: String, CaseIterable, Sendable { case diff, naive }
  /// The `conflict` axis: a delete beats a concurrent update (`delete-wins`), or the update revives
  /// the record (`update-wins`).
  public enum Conflict: String, CaseIterable, Sendable {
    case deleteWins = "delete-wins"
    case updateWins = "update-wins"
  }
  /// The `text` axis: a text field is one value the winner replaces (`whole`), or concurrent edits
  /// are merged character-wise (`merge`).
  public enum Text: String, CaseIterable, Sendable { case whole, merge }
  /// The `outbox` axis: pending changes are saved with the local store (`durable`) or live in
  /// memory and die with the app (`memory`).
  public enum Outbox: String, CaseIterable, Sendable { case durable, memory }
  /// The `unit` axis: an outbox entry is cleared once the server acknowledged it (`resumable`), or
  /// as soon as its batch is sent (`mark-first`), so a cut-off batch is lost.
  public enum Unit: String, CaseIterable, Sendable {
    case resumable
    case markFirst = "mark-first"
  }
  /// The `token` axis: the change token is saved after the fetched records are applied
  /// (`after-apply`), or before (`before-apply`), so a kill in between skips them.
  public enum Token: String, CaseIterable, Sendable {
    case afterApply = "after-apply"
    case beforeApply = "before-apply"
  }

  /// The `retry` axis: which CloudKit errors the engine retries. `transient` reacts as Apple
  /// documents (retry the transient ones, split on `limitExceeded`, upload again on
  /// `unknownItem`, give up visibly only when retrying cannot help); `never` gives up on every
  /// error (the buggy reading: a transient error treated as permanent, the change dropped
  /// while the UI shows it synced).
  public enum Retry: String, CaseIterable, Sendable { case transient, never }
  /// The `retry-after` axis: wait as long as the error's retry-after says (`honour`), or retry
  /// on the engine's own backoff (`ignore`).
  public enum RetryAfter: String, CaseIterable, Sendable { case honour, ignore }
  /// The `split` axis: on `limitExceeded`, halve the batch and send again (`on`), or send the
  /// same batch again (`off`).
  public enum Split: String, CaseIterable, Sendable { case on, off }

  /// The `zone-deleted` axis: what the engine does when it learns that its zone was deleted.
  /// `follow` reacts to the reason as Apple documents: deleted or purged by the user → delete
  /// the local copies of what was in the zone and never upload them again (records never
  /// uploaded stay); an encrypted-data reset → upload everything again. `reupload` uploads
  /// everything again whatever the reason (purged data comes back); `wipe` deletes the local
  /// copies whatever the reason (after a reset, the data is gone everywhere).
  public enum ZoneDeleted: String, CaseIterable, Sendable { case follow, reupload, wipe }

  /// The `account` axis: what the engine does with local data when the iCloud account changes
  /// (sign-out, sign-in, a switch). `keep` sets the signed-out account's data aside — unsent
  /// changes included — and brings it back when that account signs in again on the device;
  /// `wipe` deletes local data and pending changes, as Apple's sample does (unsent edits are
  /// lost); `merge` keeps local data and uploads it into whichever account signs in next.
  public enum Account: String, CaseIterable, Sendable { case keep, wipe, merge }

  /// The `unique` axis: how the engine keeps a type declared `singleton` or `unique-by` free of
  /// duplicates, which CloudKit cannot do. `key-name` derives the record name from the key (a
  /// singleton's name is fixed), so two devices creating the same key create one record and
  /// their writes merge; `ignore` names records at random (a UUID, as Core Data and SwiftData
  /// do), so every device's create is a record of its own; `dedupe` names them at random too
  /// and repairs after the fact: a device that fetches a record duplicating one it shows keeps
  /// its own and deletes the fetched one — which loses what was written to the deleted one, and
  /// when two devices fetch each other's copies at once, deletes both.
  public enum Unique: String, CaseIterable, Sendable {
    case keyName = "key-name"
    case dedupe
    case ignore
  }

  /// The `references` axis: where the schema's delete rules (`on-delete cascade|nullify`) run.
  /// `propagate` runs them on every device — on a delete made there, on a delete fetched from
  /// the server, and on a fetched record that refers to a record the device knows is deleted —
  /// as Core Data does when it imports; `local-only` runs them only on the device where the
  /// user deleted, so a child another device made or kept meanwhile is left referring to
  /// nothing; `eager` runs them everywhere but, on a fetch, as soon as the fetched deletes are
  /// applied and before the rest of the fetched changes — as a delegate that handles a batch's
  /// deletions first does — so a child that was moved to another parent before the delete
  /// (the move is in the same batch) is deleted from a stale copy.
  public enum References: String, CaseIterable, Sendable {
    case propagate
    case localOnly = "local-only"
    case eager
  }

  /// The `orphans` axis: what the engine does with a fetched record that refers to a record it
  /// does not have (its parent is in a later batch or page). `keep` applies it and lets the
  /// reference resolve when the parent arrives; `drop` discards it, as an app whose model
  /// requires the relationship does, and never sees that version again.
  public enum Orphans: String, CaseIterable, Sendable { case keep, drop }

  /// The `order` axis: how a push request is filled from the pending changes. `parents-first`
  /// takes them in the order they were made but places a record's pending parents (the records
  /// its references name, not yet saved) before it, so that a parent never goes in a later
  /// request than its child, and holds a record's delete back until a save queued before it
  /// that moved a child out of it (a synced record's reference changed away from it) is
  /// acknowledged;
  /// `as-queued` takes them in the order they were made, so a batch split can send a child
  /// first (refused under `references checked`, an orphan for a while on other devices), and a
  /// parent's delete can overtake a refused save that moved a child out of it (another device
  /// then cascades the child from its stale copy).
  public enum Order: String, CaseIterable, Sendable {
    case parentsFirst = "parents-first"
    case asQueued = "as-queued"
  }

  /// The `unknown-fields` axis: what an app version that does not know some fields of a
  /// record (added by a later schema version) does with them. `keep` keeps them as CloudKit's
  /// record does and saves only the keys it changed, and shows them after an upgrade; `drop`
  /// decodes the record into its model, which has no place for them, so its saves write the
  /// whole record without them (erasing them on the server) and after an upgrade it never
  /// fetches them again.
  public enum UnknownFields: String, CaseIterable, Sendable { case keep, drop }

  /// The `permission-failure` axis: what the engine does when the server refuses a write with
  /// `permissionFailure` (a read-only participant's edit, or one made after access ended).
  /// `revert` drops the change, takes the server's record back and tells the user; `ignore`
  /// drops the change and keeps showing the edit as saved.
  public enum PermissionFailure: String, CaseIterable, Sendable { case revert, ignore }

  /// The `access-ended` axis: what the engine does with its copies of a share's records when
  /// its account loses access (removed, left, the owner stopped sharing). `remove` deletes
  /// them from the device (not a delete: nothing is uploaded); `keep` leaves them shown.
  public enum AccessEnded: String, CaseIterable, Sendable { case remove, keep }

  /// The `fetched-read-only` axis: what the engine does with fetched changes to shared records
  /// its account may only read. `apply` applies them as any; `block` lets the app's own
  /// permission checks stop them too (sqlite-data #129: triggers meant for the user's edits also
  /// fired while the engine applied the owner's), so a read-only participant never sees an
  /// update or a delete of a record it has.
  public enum FetchedReadOnly: String, CaseIterable, Sendable { case apply, block }

  /// The `fetched-shared` axis: `apply` takes a fetched shared record as the server's; `echo`
  /// takes it for a local edit and uploads it again (SyncKit #164: the owner's changes
  /// re-uploaded by the guest) — an old version that can overwrite a newer one.
  public enum FetchedShared: String, CaseIterable, Sendable { case apply, echo }

  /// The `own-fetched` axis: `apply` applies every fetched record; `skip` ignores fetched records
  /// this device wrote last, as redundant (SyncKit #128: after a share is accepted again, the
  /// participant's own earlier records never come back).
  public enum OwnFetched: String, CaseIterable, Sendable { case apply, skip }

  /// The `shared-fetch` axis: when the engine fetches the shared database. `always` after every
  /// fetch of the private one; `at-launch` only in the first sync after the app launches, so a
  /// share accepted, left or stopped while it runs shows only after the app is relaunched
  /// (apple/sample-cloudkit-sync-engine #17).
  public enum SharedFetch: String, CaseIterable, Sendable {
    case always
    case atLaunch = "at-launch"
  }

  /// The `share-root` axis: the root record a hierarchy share is saved with (a `CKShare` is
  /// saved in one request with its root record). `fetch-first` fetches the root's current
  /// server record first (sqlite-data after #363); `as-known` saves it as the engine last
  /// fetched it, and tries again after each fetch when the server refuses it as changed —
  /// but saving a child moves its parent's change tag with nothing fetched to say so, so a
  /// root whose child was saved since is refused for good and the share is never made
  /// (sqlite-data #363).
  public enum ShareRoot: String, CaseIterable, Sendable {
    case fetchFirst = "fetch-first"
    case asKnown = "as-known"
  }

  /// The `asset-file` axis: when the engine lets go of the file an asset's upload reads.
  /// `keep-until-saved` keeps it until the save is confirmed (Apple, `CKAsset.init(fileURL:)`:
  /// CloudKit does not delete it; the app does, afterwards); `delete-after-send` deletes it as
  /// soon as an answer comes back that does not confirm the save (a conflict, a transient error),
  /// so the retry finds no file (`assetFileNotFound`, SyncKit #120).
  public enum AssetFile: String, CaseIterable, Sendable {
    case keepUntilSaved = "keep-until-saved"
    case deleteAfterSend = "delete-after-send"
  }

  /// The `fetched-assets` axis: a fetched asset's file is copied into the app's own files at
  /// once (`copy`, as Apple's `CKAsset` page asks), or the app keeps the staging file's URL
  /// (`keep-staging`), which the system purges when it likes.
  public enum FetchedAssets: String, CaseIterable, Sendable {
    case copy
    case keepStaging = "keep-staging"
  }

  /// The `asset-merge` axis: after `serverRecordChanged`, whose server record has no asset data
  /// (Apple, `CKAsset.fileURL`), the engine saves only the keys it changed, so the server keeps
  /// its asset (`changed-keys`), or copies every field of that record into what it saves
  /// (`all-fields`), saving assets with no data.
  public enum AssetMerge: String, CaseIterable, Sendable {
    case changedKeys = "changed-keys"
    case allFields = "all-fields"
  }

  /// What one conflict unit is; default `field`.
  public var granularity: Granularity = .field
  /// Which of two concurrent saves wins; default `hlc`.
  public var winner: Winner = .hlc
  /// How much of a device's copy a save overwrites; default `changed-keys`.
  public var save: Save = .changedKeys
  /// What the server keeps of a deletion; default `tombstone`.
  public var delete: Delete = .tombstone
  /// How long the server keeps tombstones and the change log before purging them; a device whose
  /// token is older must refetch everything. Default 30 days; a scenario's `retention` line wins.
  public var retention: SimDuration = .days(30)
  /// What a device does after "token expired"; default `diff`.
  public var refetch: Refetch = .diff
  /// Which of a delete and a concurrent update wins; default `delete-wins`.
  public var conflict: Conflict = .deleteWins
  /// How text fields merge; default `whole`.
  public var text: Text = .whole
  /// Where pending changes live; default `durable`.
  public var outbox: Outbox = .durable
  /// When an outbox entry is cleared; default `resumable`.
  public var unit: Unit = .resumable
  /// When the change token is saved; default `after-apply`.
  public var token: Token = .afterApply
  /// Records per push request, from 1 to 10,000; default 100.
  public var batch: Int = 100
  /// Which errors are retried; default `transient`.
  public var retry: Retry = .transient
  /// Whether a retry-after is honoured; default `honour`.
  public var retryAfter: RetryAfter = .honour
  /// Whether an oversized batch is split; default `on`.
  public var split: Split = .on
  /// The reaction to a deleted zone; default `follow`.
  public var zoneDeleted: ZoneDeleted = .follow
  /// What happens to local data on an account change; default `keep`.
  public var account: Account = .keep
  /// How duplicates of a unique type are avoided; default `key-name`.
  public var unique: Unique = .keyName
  /// Where delete rules run; default `propagate`.
  public var references: References = .propagate
  /// What happens to a fetched record whose parent is not here yet; default `keep`.
  public var orphans: Orphans = .keep
  /// How a push request is filled; default `parents-first`.
  public var order: Order = .parentsFirst
  /// What an older app version does with fields it does not know; default `keep`.
  public var unknownFields: UnknownFields = .keep
  /// What a refused write to a shared record does; default `revert`.
  public var permissionFailure: PermissionFailure = .revert
  /// What happens to a share's records when access ends; default `remove`.
  public var accessEnded: AccessEnded = .remove
  /// Fetched changes to read-only shared records; default `apply`.
  public var fetchedReadOnly: FetchedReadOnly = .apply
  /// Fetched shared records; default `apply`.
  public var fetchedShared: FetchedShared = .apply
  /// Fetched records this device wrote last; default `apply`.
  public var ownFetched: OwnFetched = .apply
  /// When the shared database is fetched; default `always`.
  public var sharedFetch: SharedFetch = .always
  /// The root record a hierarchy share is saved with; default `fetch-first`.
  public var shareRoot: ShareRoot = .fetchFirst
  /// When an upload's file is let go; default `keep-until-saved`.
  public var assetFile: AssetFile = .keepUntilSaved
  /// What happens to a fetched asset's file; default `copy`.
  public var fetchedAssets: FetchedAssets = .copy
  /// What a merge after `serverRecordChanged` saves of assets; default `changed-keys`.
  public var assetMerge: AssetMerge = .changedKeys

  /// The default axes, which are those of `field-lww-hlc`: field, hlc, changed-keys, tombstone,
  /// 30d, diff, delete-wins, whole text, a durable resumable outbox, after-apply, batches of 100,
  /// and the correct reactions to CloudKit's errors (retry the transient ones, honour
  /// retry-after, split oversized batches).
  public init() {}

  /// The settings as `key=value` pairs in the order of `policies.md`.
  public var pairs: [(key: String, value: String)] {
    [
      ("granularity", granularity.rawValue), ("winner", winner.rawValue), ("save", save.rawValue),
      ("delete", delete.rawValue), ("retention", retention.description), ("refetch", refetch.rawValue),
      ("conflict", conflict.rawValue), ("text", text.rawValue), ("outbox", outbox.rawValue),
      ("unit", unit.rawValue), ("token", token.rawValue), ("batch", String(batch)), ("retry", retry.rawValue),
      ("retry-after", retryAfter.rawValue), ("split", split.rawValue), ("zone-deleted", zoneDeleted.rawValue),
      ("account", account.rawValue), ("unique", unique.rawValue), ("references", references.rawValue), ("orphans", orphans.rawValue),
      ("order", order.rawValue), ("unknown-fields", unknownFields.rawValue), ("permission-failure", permissionFailure.rawValue),
      ("access-ended", accessEnded.rawValue), ("fetched-read-only", fetchedReadOnly.rawValue), ("fetched-shared", fetchedShared.rawValue),
      ("own-fetched", ownFetched.rawValue), ("shared-fetch", sharedFetch.rawValue),
      ("share-root", shareRoot.rawValue), ("asset-file", assetFile.rawValue), ("fetched-assets", fetchedAssets.rawValue),
      ("asset-merge", assetMerge.rawValue),
    ]
  }
}
