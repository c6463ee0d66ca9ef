document.getElementById('root').innerHTML =
  '<article><h1>Rendered by script</h1><p>This text exists only after the page\'s JavaScript ran, ' +
  'so a plain HTTP client sees an empty page and the browser sees this paragraph.</p></article>';
