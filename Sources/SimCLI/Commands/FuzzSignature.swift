import Replica
import Scenarios

/// What a failing fuzz seed has in common with others: the violation kinds it reported, and the
/// policy axes (of the policy under test) that usually cause them.
///
///     lost-edit + stale-overwrite (granularity=record, save=all-keys, text=whole, winner=arrival)
///
/// Seeds are grouped by their kinds alone; within one campaign the axes follow from the kinds,
/// since the policy is the same for every seed. Everything here is a pure function of a record
/// and the policy's settings, so a resumed campaign groups its old records the same way.
struct FuzzSignature: Hashable, Sendable {
  /// The violation kinds, in report order (``AnomalyKind/ordinal``), none twice.
  var kinds: [AnomalyKind]
  /// The axes of the policy's settings that usually cause these kinds, as `key=value`, in the
  /// order of the kinds and then of ``FuzzSignature/usualAxes(of:)``, none twice.
  var axes: [String]
  /// Whether the seeds ran a user's app: no policy axis is to blame, the app's code is.
  var app = false
  /// With an app: how the seeds failed besides violations — `refused intents` (of its own
  /// schema), `app code stopped` (a delegate call that could not finish).
  var appFailures: [String] = []

  /// What groups seeds: the kinds, and the app's failures.
  var key: [String] { kinds.map(\.rawValue) + appFailures }

  /// The signature of a failing record, or nil when the record did not fail; for a user's app
  /// (`app`), without axes, and with the intents it refused.
  init?(record: FuzzRecord, settings: PolicySettings, app: Bool = false) {
    var kinds: [AnomalyKind] = []
    for (index, kind) in AnomalyKind.allCases.enumerated() where kind.isViolation && index < record.counts.count && record.counts[index] > 0 {
      kinds.append(kind)
    }
    var failures: [String] = []
    if let tally = record.app {
      if tally.refused > 0 { failures.append("refused intents") }
      if tally.errors > 0 { failures.append("app code stopped") }
    }
    guard !kinds.isEmpty || !failures.isEmpty else { return nil }
    self.init(kinds: kinds, settings: settings)
    appFailures = failures
    if app {
      self.app = true
      axes = []
    }
  }

  /// The signature of `kinds` (sorted into report order) under a policy with `settings`.
  init(kinds: [AnomalyKind], settings: PolicySettings) {
    var sorted: [AnomalyKind] = []
    for kind in AnomalyKind.allCases where kinds.contains(kind) { sorted.append(kind) }
    self.kinds = sorted
    var axes: [String] = []
    for kind in sorted {
      for axis in Self.usualAxes(of: kind) where axis.isSet(settings) && !axes.contains(axis.name) {
        axes.append(axis.name)
      }
    }
    self.axes = axes
  }

  /// For people: `lost-edit + stranded-record (unit=mark-first, granularity=record)`.
  var text: String {
    key.joined(separator: " + ") + " ("
      + (app ? "in the app's code" : axes.isEmpty ? "no usual policy axis" : axes.joined(separator: ", ")) + ")"
  }

  /// For file names: the kinds joined by `+`, e.g. `lost-edit+stale-overwrite`.
  var slug: String { key.map { $0.replacingOccurrences(of: " ", with: "-") }.joined(separator: "+") }

  /// One policy setting that usually causes a kind of violation.
  struct Axis: Sendable {
    /// `granularity=record`.
    var name: String
    /// Whether `settings` have it.
    var isSet: @Sendable (PolicySettings) -> Bool
  }

  /// The axis values that usually cause `kind`: those of the test helpers' advice (SimTesting's
  /// `ViolationAdvice`), plus the outbox axes for a lost edit, which the oracle blames when an
  /// edit never left its device. Kinds no axis causes (duplicate-event, phantom-value: a merge
  /// decision) have none.
  static func usualAxes(of kind: AnomalyKind) -> [Axis] {
    switch kind {
    case .lostEdit:
      [
        Axis(name: "granularity=record") { $0.granularity == .record },
        Axis(name: "save=all-keys") { $0.save == .allKeys },
        Axis(name: "text=whole") { $0.text == .whole },
        // An edit whose outbox entry was lost never reaches the server (the oracle says so).
        Axis(name: "unit=mark-first") { $0.unit == .markFirst },
        Axis(name: "outbox=memory") { $0.outbox == .memory },
        Axis(name: "retry=never") { $0.retry == .never },
        Axis(name: "unknown-fields=drop") { $0.unknownFields == .drop },
        Axis(name: "unique=dedupe") { $0.unique == .dedupe },
        Axis(name: "permission-failure=ignore") { $0.permissionFailure == .ignore },
      ]
    case .accessLeak:
      [Axis(name: "access-ended=keep") { $0.accessEnded == .keep }, Axis(name: "account=merge") { $0.account == .merge }]
    case .missingAsset:
      [
        Axis(name: "fetched-assets=keep-staging") { $0.fetchedAssets == .keepStaging },
        Axis(name: "asset-merge=all-fields") { $0.assetMerge == .allFields },
      ]
    case .staleOverwrite:
      [Axis(name: "winner=clock") { $0.winner == .clock }, Axis(name: "winner=arrival") { $0.winner == .arrival }]
    case .resurrection:
      [
        Axis(name: "delete=hard") { $0.delete == .hard }, Axis(name: "refetch=naive") { $0.refetch == .naive },
        // A read-only participant's delete, refused and not taken back: the record shows nowhere
        // on the device but everywhere else.
        Axis(name: "permission-failure=ignore") { $0.permissionFailure == .ignore },
        Axis(name: "own-fetched=skip") { $0.ownFetched == .skip },
        Axis(name: "fetched-read-only=block") { $0.fetchedReadOnly == .block },
      ]
    case .droppedEvent:
      [
        Axis(name: "unit=mark-first") { $0.unit == .markFirst },
        Axis(name: "outbox=memory") { $0.outbox == .memory },
        Axis(name: "token=before-apply") { $0.token == .beforeApply },
        Axis(name: "orphans=drop") { $0.orphans == .drop },
        Axis(name: "shared-fetch=at-launch") { $0.sharedFetch == .atLaunch },
      ]
    case .strandedRecord:
      [
        Axis(name: "unit=mark-first") { $0.unit == .markFirst }, Axis(name: "outbox=memory") { $0.outbox == .memory },
        Axis(name: "retry=never") { $0.retry == .never },
        // A record made in a share that went before it was uploaded, kept on the device.
        Axis(name: "access-ended=keep") { $0.accessEnded == .keep },
        Axis(name: "asset-file=delete-after-send") { $0.assetFile == .deleteAfterSend },
      ]
    case .danglingReference:
      [Axis(name: "references=local-only") { $0.references == .localOnly }, Axis(name: "references=eager") { $0.references == .eager }]
    case .logicalDuplicate:
      [Axis(name: "unique=ignore") { $0.unique == .ignore }, Axis(name: "unique=dedupe") { $0.unique == .dedupe }]
    case .stalledSync:
      [
        Axis(name: "retry-after=ignore") { $0.retryAfter == .ignore }, Axis(name: "split=off") { $0.split == .off },
        Axis(name: "share-root=as-known") { $0.shareRoot == .asKnown },
      ]
    case .divergence:
      [
        Axis(name: "refetch=naive") { $0.refetch == .naive }, Axis(name: "token=before-apply") { $0.token == .beforeApply },
        Axis(name: "orphans=drop") { $0.orphans == .drop }, Axis(name: "unknown-fields=drop") { $0.unknownFields == .drop },
        Axis(name: "fetched-read-only=block") { $0.fetchedReadOnly == .block }, Axis(name: "own-fetched=skip") { $0.ownFetched == .skip },
        Axis(name: "shared-fetch=at-launch") { $0.sharedFetch == .atLaunch },
      ]
    case .duplicateEvent, .phantomValue, .concurrentOverwrite, .deleteUpdateConflict:
      []
    }
  }

  /// The kind a shrink of this signature's first seed keeps: the first of its kinds that no
  /// earlier signature's minimal scenario keeps (`covered`), so that the files together show
  /// as many kinds as possible, else its first. Divergence comes last: it is kept only when
  /// nothing more specific explains the failure (as the shrinker itself chooses).
  /// The kind a shrink keeps: nil when the seeds failed with no violation (an app that refused
  /// intents: the seed itself is what replays it).
  func kindToKeep(covered: [AnomalyKind]) -> AnomalyKind? {
    let preferred = kinds.filter { $0 != .divergence } + kinds.filter { $0 == .divergence }
    return preferred.first { !covered.contains($0) } ?? preferred.first
  }
}
