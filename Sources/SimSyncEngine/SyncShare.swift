import Foundation

/// A share, as the app's shared-database engine hands it over (`CKShare`, a record subclass,
/// <https://developer.apple.com/documentation/cloudkit/ckshare>): of a whole zone, or of a record
/// hierarchy (``rootRecordID``); who owns it, who takes part with which permission, and what the
/// current user may do.
///
/// It comes as a record of the shared zone in `fetchedRecordZoneChanges` — first in the event,
/// when the engine first sees it and whenever it changes (a participant added or removed, a
/// permission changed) — of type ``recordType``, as CloudKit delivers a zone's `CKShare`:
/// * a zone-wide share is named ``zoneWideShareRecordName`` in the zone it shares;
/// * a hierarchy share (`CKShare(rootRecord:)`) is in its root record's zone, named
///   ``recordName(forRoot:)`` (`share-` and the root's record name: CloudKit names a share
///   record itself, and the simulator picks a name it can give again in every run), and says
///   its root in ``rootRecordID``. It covers the root and every record whose chain of
///   ``SyncRecord/parent`` references leads to it; those records come in the same zone, the
///   owner's. When the participant's access to such a share ends while another share of the
///   zone stays, the share record and the records only it covered come as deletions; when no
///   share of the zone is left, the zone is deleted from the shared database.
///
/// An app tells it apart as it tells a `CKShare` apart, and reads the current user's
/// permission to stop the user editing a read-only share:
///
///     for modification in changes.modifications {
///       if let share = modification.record as? SyncShare {
///         shares[share.recordID] = share
///         continue
///       }
///       …
///     }
///     let canEdit = shares[shareID]?.currentUserParticipant?.permission != .readOnly
///
/// What is not modelled: the app does not make, save or delete a share (a scenario's `share`,
/// `invite`, `permission`, `remove`, `unshare` lines are the user in the system's sharing UI);
/// share URLs and `CKShare.Metadata`, public permission, and `CKRecord.share` (the root's
/// reference to its share).
public final class SyncShare: SyncRecord, @unchecked Sendable {
  /// The record name of a zone-wide share (`CKRecordNameZoneWideShare`).
  public static let zoneWideShareRecordName = "cloudkit.zoneshare"
  /// The record type of a share (`CKRecord.SystemType.share`).
  public static let recordType = "cloudkit.share"

  /// A participant's permission (`CKShare.ParticipantPermission`).
  public enum ParticipantPermission: String, Hashable, Sendable {
    /// May read the share's records, not change them: a save is refused with
    /// `permissionFailure`.
    case readOnly
    /// May read and change them.
    case readWrite
  }

  /// A participant's role (`CKShare.ParticipantRole`).
  public enum ParticipantRole: String, Hashable, Sendable {
    /// The user who shares the zone.
    case owner
    /// A user invited to it.
    case privateUser
  }

  /// Where a participant is with the invitation (`CKShare.ParticipantAcceptanceStatus`). Only
  /// accepted participants see the records ("The records remain accessible for as long as the
  /// participant's status is accepted", Apple, `CKShare.Participant`).
  public enum ParticipantAcceptanceStatus: String, Hashable, Sendable {
    /// Invited, not accepted yet.
    case pending
    /// Accepted.
    case accepted
  }

  /// One user's part in the share (`CKShare.Participant`); users are named by their user record
  /// name (the scenario's account name), where CloudKit gives a `CKUserIdentity`.
  public struct Participant: Hashable, Sendable, CustomStringConvertible {
    /// The user (`userIdentity.userRecordID?.recordName`).
    public var userName: String
    /// Owner or invited user.
    public var role: ParticipantRole
    /// What the user may do with the records.
    public var permission: ParticipantPermission
    /// Whether the user accepted.
    public var acceptanceStatus: ParticipantAcceptanceStatus

    /// A participant.
    public init(userName: String, role: ParticipantRole, permission: ParticipantPermission, acceptanceStatus: ParticipantAcceptanceStatus) {
      self.userName = userName
      self.role = role
      self.permission = permission
      self.acceptanceStatus = acceptanceStatus
    }

    /// `bob read-only accepted`.
    public var description: String {
      "\(userName) \(permission == .readOnly ? "read-only" : "read-write")\(role == .owner ? " owner" : "") \(acceptanceStatus.rawValue)"
    }
  }

  /// The record name of the share of the hierarchy under the record called `rootName`
  /// (`share-ROOT`).
  public static func recordName(forRoot rootName: String) -> String { "share-" + rootName }

  /// The owner of the zone or hierarchy.
  public let owner: Participant
  /// Every participant: the owner first, then the invited users in the order invited.
  public let participants: [Participant]
  /// The signed-in user's own part (`currentUserParticipant`).
  public let currentUserParticipant: Participant?

  /// The root record of a hierarchy share (`CKShare.Metadata.hierarchicalRootRecordID`); nil
  /// for a zone-wide share.
  public let rootRecordID: SyncRecordID?

  /// The zone-wide share of `zoneID`, as the signed-in user `currentUser` sees it.
  public convenience init(zoneID: SyncRecordZoneID, owner: Participant, participants: [Participant], currentUser: String) {
    self.init(
      recordID: SyncRecordID(recordName: Self.zoneWideShareRecordName, zoneID: zoneID), root: nil, owner: owner, participants: participants,
      currentUser: currentUser)
  }

  /// The share of the hierarchy under `rootRecordID` (`CKShare(rootRecord:)`), as the signed-in
  /// user `currentUser` sees it: named ``recordName(forRoot:)`` in the root's zone.
  public convenience init(rootRecordID: SyncRecordID, owner: Participant, participants: [Participant], currentUser: String) {
    self.init(
      recordID: SyncRecordID(recordName: Self.recordName(forRoot: rootRecordID.recordName), zoneID: rootRecordID.zoneID), root: rootRecordID,
      owner: owner, participants: participants, currentUser: currentUser)
  }

  init(recordID: SyncRecordID, root: SyncRecordID?, owner: Participant, participants: [Participant], currentUser: String) {
    self.owner = owner
    self.participants = participants
    rootRecordID = root
    currentUserParticipant = participants.first { $0.userName == currentUser }
    super.init(recordType: Self.recordType, recordID: recordID)
  }

  /// A copy: the same share.
  public override func copy() -> SyncRecord {
    let share = SyncShare(
      recordID: recordID, root: rootRecordID, owner: owner, participants: participants, currentUser: currentUserParticipant?.userName ?? "")
    share.system = system
    share.fields = fields
    return share
  }

  /// `share of Trips@alice: alice read-write owner accepted, bob read-only accepted` (`share of
  /// trip (Trips@alice): …` for a hierarchy share).
  public override var description: String {
    "share of \(rootRecordID.map { "\($0)" } ?? "\(recordID.zoneID)"): " + participants.map(\.description).joined(separator: ", ")
  }
}
