console.log('dedicated worker says hello');
postMessage('ready');
