// Whether a process id names a live process: run locks and atomic writes' temporary files are
// named by the id of the process that made them.

/** Whether a process of id `pid` exists now (of this user or another). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: a process of another user holds that id, alive.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
