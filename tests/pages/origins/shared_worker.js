importScripts("attempt.js");
onconnect = (connection) => {
  const port = connection.ports[0];
  port.onmessage = async (event) => port.postMessage(await attemptIn(event.data.kind, event.data.url));
};
