// Calls a predicate on every animation frame (and timer, for a hidden tab) until it is truthy.
// engine/waits.py: POLL.
(predicate, arg, ms) => new Promise((resolve, reject) => {
  let done = false;
  const finish = (value, error) => { if (done) return; done = true; clearTimeout(limit); clearInterval(timer);
                                     error ? reject(error) : resolve(value); };
  const check = () => { if (done) return; try { if (predicate(arg)) finish(true); else requestAnimationFrame(check); }
                        catch (error) { finish(false, error); } };
  const limit = setTimeout(() => finish(false), ms);
  const timer = setInterval(() => { try { if (!done && predicate(arg)) finish(true); } catch (error) { finish(false, error); } }, 100);
  check();
})
