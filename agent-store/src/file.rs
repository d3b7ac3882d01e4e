//! Runs as files in one folder: a checkpoint store with no database, for one process.

use agent_contracts_runtime::model::BoxFuture;
use agent_contracts_runtime::store::{check_claim, check_save, claim_record, now_ms};
use agent_contracts_runtime::store::{renew_lease, saved_record};
use agent_contracts_runtime::{
    store::CheckpointStore, store::Lease, store::RunRecord, store::StoreError,
};
use std::path::PathBuf;
use std::sync::Mutex;

/// Runs as files in one folder, `<run id>.run.json` each, replaced by atomic rename so a
/// crash leaves the old or the new record, never half of one.
///
/// Saves and claims are checked under a lock of this store value: share one `FileStore`
/// (in an `Arc`) between the tasks of a process. Several processes on one folder need a
/// database store.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    lock: Mutex<()>,
}

impl FileStore {
    /// A store in `dir`, created if missing.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, StoreError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(StoreError::backend)?;
        Ok(Self {
            dir,
            lock: Mutex::new(()),
        })
    }

    fn path(&self, run_id: &str) -> Result<PathBuf, StoreError> {
        let valid = !run_id.is_empty()
            && run_id.len() <= 128
            && run_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !valid {
            return Err(StoreError::not_found(run_id));
        }
        Ok(self.dir.join(format!("{run_id}.run.json")))
    }

    fn read(&self, run_id: &str) -> Result<Option<RunRecord>, StoreError> {
        let path = self.path(run_id)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::backend(e)),
        };
        let record: RunRecord = serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            reason: format!("the run file is not a run record: {e}"),
        })?;
        if record.run_id != run_id {
            return Err(StoreError::Corrupt {
                run_id: run_id.to_owned(),
                reason: format!("the run file holds run `{}`", cut(&record.run_id)),
            });
        }
        Ok(Some(record))
    }

    fn write(&self, record: &RunRecord) -> Result<(), StoreError> {
        use std::io::Write as _;
        let path = self.path(&record.run_id)?;
        let tmp = self
            .dir
            .join(format!(".{}.{}.tmp", record.run_id, std::process::id()));
        let text = serde_json::to_string(record).map_err(StoreError::backend)?;
        let mut file = std::fs::File::create(&tmp).map_err(StoreError::backend)?;
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_all())
            .map_err(StoreError::backend)?;
        std::fs::rename(&tmp, &path).map_err(StoreError::backend)
    }

    fn locked<T>(&self, f: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f()
    }
}

impl CheckpointStore for FileStore {
    fn save<'a>(&'a self, record: &'a RunRecord) -> BoxFuture<'a, Result<u64, StoreError>> {
        Box::pin(async move {
            self.locked(|| {
                let stored = self.read(&record.run_id)?;
                let sequence = check_save(stored.as_ref(), record)?;
                self.write(&saved_record(stored.as_ref(), record, sequence))?;
                Ok(sequence)
            })
        })
    }

    fn load<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
        Box::pin(async move {
            self.read(run_id)?
                .ok_or_else(|| StoreError::not_found(run_id))
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<Result<RunRecord, StoreError>>, StoreError>> {
        Box::pin(async move {
            let mut all = Vec::new();
            for entry in std::fs::read_dir(&self.dir).map_err(StoreError::backend)? {
                let name = entry.map_err(StoreError::backend)?.file_name();
                let name = name.to_string_lossy();
                let Some(run_id) = name.strip_suffix(".run.json") else {
                    continue;
                };
                match self.read(run_id) {
                    Ok(Some(record)) => {
                        all.push((record.created_ms, run_id.to_owned(), Ok(record)))
                    }
                    // Deleted since the folder was read.
                    Ok(None) => {}
                    // A corrupt file is listed as such, last; an I/O failure fails the list.
                    Err(e @ StoreError::Corrupt { .. }) => {
                        all.push((u64::MAX, run_id.to_owned(), Err(e)))
                    }
                    Err(e) => return Err(e),
                }
            }
            all.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
            Ok(all.into_iter().map(|(_, _, r)| r).collect())
        })
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.locked(|| match std::fs::remove_file(self.path(run_id)?) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Err(StoreError::not_found(run_id))
                }
                Err(e) => Err(StoreError::backend(e)),
            })
        })
    }

    fn claim<'a>(
        &'a self,
        run_id: &'a str,
        sequence: u64,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<RunRecord, StoreError>> {
        Box::pin(async move {
            self.locked(|| {
                let mut stored = self
                    .read(run_id)?
                    .ok_or_else(|| StoreError::not_found(run_id))?;
                let now = now_ms();
                check_claim(&stored, sequence, now)?;
                claim_record(&mut stored, lease, now);
                self.write(&stored)?;
                Ok(stored)
            })
        })
    }

    fn claim_next<'a>(
        &'a self,
        workflow: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<Option<RunRecord>, StoreError>> {
        Box::pin(async move {
            let runs = self.list().await?;
            self.locked(|| {
                let now = now_ms();
                // Listed before the lock: each candidate is read again under it.
                let mut candidates: Vec<RunRecord> = runs
                    .into_iter()
                    .flatten()
                    .filter(|r| r.workflow == workflow)
                    .collect();
                candidates
                    .sort_by(|a, b| (a.updated_ms, &a.run_id).cmp(&(b.updated_ms, &b.run_id)));
                for candidate in candidates {
                    let Some(mut stored) = self.read(&candidate.run_id)? else {
                        continue;
                    };
                    if stored.workflow == workflow && stored.is_runnable(now) {
                        claim_record(&mut stored, lease, now);
                        self.write(&stored)?;
                        return Ok(Some(stored));
                    }
                }
                Ok(None)
            })
        })
    }

    /// Each schema in `contracts/<fingerprint>.json`, written once by atomic rename.
    fn save_contracts<'a>(
        &'a self,
        contracts: &'a [(String, String)],
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            use std::io::Write as _;
            let dir = self.dir.join("contracts");
            std::fs::create_dir_all(&dir).map_err(StoreError::backend)?;
            for (fingerprint, schema) in contracts {
                let Some(path) = contract_path(&dir, fingerprint) else {
                    continue;
                };
                if path.exists() {
                    continue;
                }
                let tmp = dir.join(format!(".{fingerprint}.{}.tmp", std::process::id()));
                let mut file = std::fs::File::create(&tmp).map_err(StoreError::backend)?;
                file.write_all(schema.as_bytes())
                    .and_then(|()| file.sync_all())
                    .map_err(StoreError::backend)?;
                std::fs::rename(&tmp, &path).map_err(StoreError::backend)?;
            }
            Ok(())
        })
    }

    fn load_contract<'a>(
        &'a self,
        fingerprint: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, StoreError>> {
        Box::pin(async move {
            let Some(path) = contract_path(&self.dir.join("contracts"), fingerprint) else {
                return Ok(None);
            };
            match std::fs::read_to_string(path) {
                Ok(text) => Ok(Some(text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(StoreError::backend(e)),
            }
        })
    }

    fn renew<'a>(
        &'a self,
        run_id: &'a str,
        lease: &'a Lease,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.locked(|| {
                let mut stored = self
                    .read(run_id)?
                    .ok_or_else(|| StoreError::not_found(run_id))?;
                renew_lease(&mut stored, lease, now_ms())?;
                self.write(&stored)
            })
        })
    }
}

/// The file of a contract fingerprint: 16 hex digits, nothing else names a file.
fn contract_path(dir: &std::path::Path, fingerprint: &str) -> Option<PathBuf> {
    let valid = fingerprint.len() == 16 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit());
    valid.then(|| dir.join(format!("{fingerprint}.json")))
}

/// At most 128 bytes of a run ID read from a file (untrusted: it may be huge), cut at a
/// character boundary and marked with `…`, as the runtime's errors cut what they echo.
fn cut(text: &str) -> String {
    if text.len() <= 128 {
        return text.to_owned();
    }
    let mut end = 128;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}
