importScripts("attempt.js");
onmessage = async (event) => postMessage(await attemptIn(event.data.kind, event.data.url));
