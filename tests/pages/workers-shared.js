onconnect = event => {
  console.log('shared worker says hello');
  event.ports[0].postMessage('ready');
};
