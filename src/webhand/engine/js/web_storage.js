// One operation on localStorage or sessionStorage; every item afterwards.
// engine/page_scripts.py: WEB_STORAGE.
([area, operation, key, value]) => {
  const store = area === 'session' ? window.sessionStorage : window.localStorage;
  if (operation === 'set') store.setItem(key, value);
  else if (operation === 'delete') store.removeItem(key);
  else if (operation === 'clear') store.clear();
  const items = {};
  for (let i = 0; i < store.length; i++) { const k = store.key(i); items[k] = store.getItem(k); }
  return items;
}
