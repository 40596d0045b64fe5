// Generated from scenarios/*.scenario by `RECORD_EMBEDDED=1 swift test --filter EmbeddedScenarioTests`;
// a test fails when it and the folder disagree. Do not edit by hand.

/// The named scenarios, built into the tool so that `sim-cli run NAME` works wherever the
/// binary is, even without the repository's `scenarios/` folder next to it.
enum EmbeddedScenarios {
  static let files: [(name: String, text: String)] = [
    ("budget-expires-mid-batch", ##"""
scenario budget-expires-mid-batch
about "Three strokes are queued; a 50 ms background window starts the upload the 100 ms network cannot finish. A unit cleared when sent (mark-first) loses the batch; a resumable one does not."

devices iPad phone
policy mark-first-unit
latency 100ms
autosync off

type Stroke append-only
  points: string = ""

at 1s    iPad  create Stroke s1 points="a"
at 1s    iPad  create Stroke s2 points="b"
at 1s    iPad  create Stroke s3 points="c"
at 3s    iPad  background 50ms
settle

expect stranded-record == 3
"""## + "\n"),
    ("delete-vs-edit", ##"""
scenario delete-vs-edit
about "The phone deletes a note while the offline iPad edits it. Either outcome is valid; tombstones make the delete win everywhere, and the report says so."

devices iPad phone
policy field-lww-hlc
latency 100ms

type Note
  title: string = "" mutable
  body: text = ""

at 0s    iPad  create Note n1 title="Shopping" body="milk"
at 2s    offline iPad
at 3s    iPad  append n1.body ", eggs"
at 4s    phone delete n1
at 10s   online iPad
settle

expect no violations
expect delete-update-conflict == 1
expect n1 deleted
"""## + "\n"),
    ("different-fields", ##"""
scenario different-fields
about "The iPad edits the title, the phone the body, both offline. Record-level LWW with all keys loses the title although nobody else touched it."

devices iPad phone
policy cloudkit-default
latency 100ms

type Note
  title: string = "" mutable
  body: text = ""

at 0s    iPad  create Note n1 title="Sermon" body="In the beginning"
at 5s    offline iPad phone
at 6s    iPad  set n1 title="Sermon notes"
at 7s    phone append n1.body " was the Word"
at 10s   online iPad
at 20s   online phone
settle

expect lost-edit == 1
expect n1.body == "In the beginning was the Word"
"""## + "\n"),
    ("fat-note-lww", ##"""
scenario fat-note-lww
about "One fat mutable Note: the iPad appends a margin note, the phone fixes a typo, both offline. Whole-record last-writer-wins keeps one version and an edit evaporates."

devices iPad phone
policy cloudkit-default
latency 100ms

type Note
  title: string = "" mutable
  body: text = ""

at 0s    iPad  create Note n1 title="Sermon" body="In teh beginning"
at 2s    offline iPad phone
at 3s    iPad  append n1.body " (margin: see John 1)"
at 4s    phone replace n1.body "teh" "the"
at 10s   online iPad
at 20s   online phone
settle

expect lost-edit == 1
expect converged
"""## + "\n"),
    ("killed-with-memory-outbox", ##"""
scenario killed-with-memory-outbox
about "A note is made offline and the app is killed before it syncs. An outbox kept in memory dies with the app; the note stays on the iPad and never reaches anyone."

devices iPad phone
policy memory-outbox
latency 100ms

type Note
  title: string = "" mutable

at 0s    offline iPad
at 1s    iPad  create Note n1 title="unsent"
at 2s    iPad  kill
at 3s    online iPad
settle

expect stranded-record == 1
"""## + "\n"),
    ("lost-ack-hard-delete", ##"""
scenario lost-ack-hard-delete
about "The iPad's save reaches the server but the answer is lost; the phone deletes the note; the iPad retries the save. A hard delete forgets the note, so the retry brings it back."

devices iPad phone
policy hard-delete
latency 100ms
autosync off

type Note
  title: string = "" mutable

at 0s     iPad  create Note n1 title="a"
at 0.5s   iPad  sync
at 2s     phone sync
at 10s    iPad  set n1 title="b"
at 10s    iPad  sync
# The push reaches the server at 10.1s; the answer would arrive at 10.2s.
at 10.15s offline iPad
at 12s    phone sync
at 13s    phone delete n1
at 13s    phone sync
at 20s    online iPad
settle

expect resurrection >= 1
expect n1 exists
"""## + "\n"),
    ("retention-zombie", ##"""
scenario retention-zombie
about "The phone is offline for 40 days while the iPad deletes a note. Its change token expires; a naive refetch keeps the deleted row forever (a zombie)."

devices iPad phone
policy cloudkit-default
latency 100ms

type Note
  title: string = "" mutable

at 0s    iPad  create Note n1 title="old news"
at 1m    offline phone
at 2m    iPad  delete n1
at 40d   online phone
settle

expect resurrection == 1
"""## + "\n"),
    ("skewed-clock", ##"""
scenario skewed-clock
about "The iPad's clock is ten minutes fast. The phone sees its title and writes a newer one, but device-clock LWW keeps the stale value: a stale overwrite with no conflict to excuse it."

devices iPad phone
policy field-lww-clock
latency 100ms
clock iPad skew +10m

type Note
  title: string = "" mutable

at 0s    iPad  create Note n1 title="draft"
at 1s    iPad  set n1 title="old"
at 10s   phone set n1 title="new"
settle

expect stale-overwrite == 1
expect n1.title == "old"
"""## + "\n"),
    ("three-device-fanout", ##"""
scenario three-device-fanout
about "Three devices insert events and set one preference while partitioned, with lossy pushes and a server outage. Append-only events with tombstones lose nothing and converge."

devices iPad phone mac
policy append-only
latency 20ms..300ms
loss 2%
duplicate 1%
push 50%
clock mac skew -3s

type Stroke append-only
  points: string = ""
type Preference
  value: string = "light" mutable

at 0s    iPad  create Preference theme
at 1s    sync
at 2s    offline phone
at 3s    iPad  create Stroke s1 points="a"
at 3s    phone create Stroke s2 points="b"
at 3s    mac   create Stroke s3 points="c"
at 4s    server down
at 5s    mac   set theme value="dark"
at 6s    phone set theme value="sepia"
at 8s    server up
at 9s    online phone
at 9s    iPad  create Stroke s4 points="d"
settle

expect no violations
expect converged
expect s4 exists
"""## + "\n"),
    ("token-before-apply", ##"""
scenario token-before-apply
about "The phone fetches the iPad's stroke; the app is killed after it saved the change token but before it applied the records. The next fetch starts after them: the stroke never appears."

devices iPad phone
policy token-before-apply
latency 100ms
push off

type Stroke append-only
  points: string = ""

at 0s       iPad  create Stroke s1 points="from the iPad"
# The reply reaches the phone at 5.2s and takes about 20ms to apply.
at 5s       phone sync
at 5.201s   phone kill
settle

expect dropped-event == 1
"""## + "\n"),
    ("two-device-acceptance", ##"""
scenario two-device-acceptance
about "The essay's test: both devices offline; different append-only inserts on each, the same mutable preference on both, a note deleted on one while the other is offline; then online. Nothing may be lost."

devices iPad phone
policy append-only
seed 1

latency 20ms..300ms
loss 1%
clock phone skew +2s drift 40ppm
retention 30d

type Note
  title: string = "" mutable
  body: text = ""
type Stroke append-only
  note: ref Note?
  points: string = ""
type Preference
  value: string = "light" mutable

at 0s    iPad  create Note n1 title="Sermon" body="In the beginning"
at 0s    iPad  create Note n2 title="Scratch"
at 0s    iPad  create Preference theme
at 1s    sync
at 2s    offline iPad phone
at 3s    iPad  create Stroke s1 note=n1 points="a"
at 3s    phone create Stroke s2 note=n1 points="b"
at 3.5s  iPad  delete n2
at 4s    iPad  set theme value="dark"
at 4.5s  phone set theme value="sepia"
at 10s   online iPad phone
settle

expect no violations
expect converged
expect theme.value in "dark" "sepia"
expect s1 exists
expect s2 exists
expect n2 deleted
"""## + "\n"),
    ("unsafe-schema", ##"""
scenario unsafe-schema
about "A record type with a required field and no default is not CloudKit-safe: it exists locally and silently never uploads. The other device never sees it."

devices iPad phone
policy append-only
latency 100ms

type Note
  title: string = "" mutable
type Highlight
  color: string
  note: ref Note

at 0s    iPad  create Note n1 title="Sermon"
at 1s    iPad  create Highlight h1 color="yellow" note=n1
settle

expect stranded-record == 1
expect n1 exists
"""## + "\n"),
  ]
}
